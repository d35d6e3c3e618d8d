"""log_content policy and scrubbing are applied before an event becomes a record."""

from __future__ import annotations

import hashlib
import math

import pytest

from memory_core.engine.events import (
    DecayApplied,
    MemoriesMerged,
    MemoryAdded,
    MemoryEvicted,
    StatusChanged,
)
from memory_core.engine.model import EvictionReason, MemoryKind, MemoryStatus
from memory_core.errors import ConfigError
from memory_core.store.pii import PiiScrubber
from memory_core.store.privacy import EventEncoder, LogContent, parse_log_content

TEXT = "Bob's email is bob@example.com"


def evicted(**kw: object) -> MemoryEvicted:
    values: dict[str, object] = {
        "at": 1_700_000_000.0,
        "session_id": "s1",
        "node_id": "n1",
        "reason": EvictionReason.BELOW_THRESHOLD,
        "content": TEXT,
        "kind": MemoryKind.EPISODIC,
        "weight": 0.12,
        "created_at": 1_699_000_000.0,
        "access_count": 3,
        "provenance": ("p1",),
        "metadata": {"note": "call +1 415 555 2671"},
    }
    values.update(kw)
    return MemoryEvicted(**values)  # type: ignore[arg-type]


def test_full_keeps_text_in_the_content_column() -> None:
    record = EventEncoder("a").encode(evicted())
    assert record.content == TEXT and "content" not in record.payload
    assert (record.type, record.reason, record.node_id, record.session_id) == (
        "evicted",
        "below_threshold",
        "n1",
        "s1",
    )
    assert record.at.timestamp() == 1_700_000_000.0 and record.at.tzinfo is not None
    assert record.payload["provenance"] == ["p1"] and record.payload["kind"] == "episodic"
    assert record.weights == {"n1": 0.12}


def test_redacted_keeps_only_hash_length_and_kind() -> None:
    record = EventEncoder("a", LogContent.REDACTED).encode(evicted())
    assert record.content is None
    assert record.payload["content_sha256"] == hashlib.sha256(TEXT.encode()).hexdigest()
    assert record.payload["content_length"] == len(TEXT)
    assert record.payload["content_kind"] == "episodic"
    assert "bob@" not in repr(record)


def test_none_drops_text_entirely() -> None:
    record = EventEncoder("a", LogContent.NONE).encode(evicted())
    assert record.content is None
    assert not {"content", "content_sha256", "content_length"} & set(record.payload)
    assert "Bob" not in repr(record)


def test_scrubber_applies_to_content_and_every_payload_string() -> None:
    encoder = EventEncoder("a", scrubber=PiiScrubber(), user_id="u7")
    record = encoder.encode(evicted())
    assert record.content == "Bob's email is [EMAIL]"
    assert record.payload["metadata"] == {"note": "call [PHONE]"}
    assert record.user_id == "u7"
    status = encoder.encode(
        StatusChanged(
            at=1.0,
            node_id="n",
            old=MemoryStatus.ACTIVE,
            new=MemoryStatus.DEPRECATED,
            reason="user x@y.org asked",
        )
    )
    assert status.reason is None and status.payload["reason"] == "user [EMAIL] asked"


def test_merged_content_is_content_and_kept_id_is_the_node() -> None:
    merged = MemoriesMerged(
        at=1.0, kept_id="k", merged_id="m", merged_content=TEXT, similarity=0.95
    )
    record = EventEncoder("a", LogContent.REDACTED).encode(merged)
    assert record.node_id == "k" and record.content is None
    assert record.payload["content_length"] == len(TEXT) and "merged_content" not in record.payload


def test_decay_weights_become_samples_not_payload() -> None:
    decay = DecayApplied(
        at=1.0,
        strategy="linear",
        nodes=3,
        mean_weight=0.5,
        min_weight=0.1,
        max_weight=float("nan"),
        weights={"a": 0.1, "b": 0.9, "c": math.inf},
    )
    record = EventEncoder("a").encode(decay)
    assert record.weights == {"a": 0.1, "b": 0.9}  # non-finite weights are not samples
    assert "weights" not in record.payload
    assert record.payload["max_weight"] is None  # JSON has no NaN


def test_added_event_samples_its_weight() -> None:
    added = MemoryAdded(
        at=1.0, node_id="n", content="hi", kind=MemoryKind.SESSION, weight=1.1, importance=0.5
    )
    assert EventEncoder("a").encode(added).weights == {"n": 1.1}


def test_bad_policy_names_the_allowed_values() -> None:
    with pytest.raises(ConfigError, match="full, redacted, none"):
        parse_log_content("partial")
