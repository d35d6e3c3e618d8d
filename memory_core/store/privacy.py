"""What of an engine event reaches the database: the ``log_content`` policy and PII scrubbing.

Content (a memory's text) goes to the ``content`` column under ``full`` (scrubbed when a
scrubber is set), is replaced by its SHA-256, length and kind under ``redacted``, and is
dropped under ``none``; a memory's metadata is kept whole only under ``full`` (its keys
under ``redacted``). Every other string of the payload (metadata, status reasons) is
scrubbed too. Nothing of the original text is written before this step has run.

A new memory's embedding (base64 of its float32 vector, for followers that replay the
log) says as much as its text: it is kept only under ``full`` without a scrubber.
"""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from enum import StrEnum
from typing import Any

from memory_core.engine.clock import to_datetime
from memory_core.engine.events import AtlasEvent
from memory_core.engine.model import EvictionReason
from memory_core.errors import ConfigError
from memory_core.store.pii import PiiScrubber
from memory_core.store.records import EventRecord

# fields of AtlasEvent subclasses that hold a memory's (or a read's query) text
CONTENT_FIELDS = ("content", "merged_content", "query")
# fields whose node id the event is about, in order of preference
NODE_FIELDS = ("node_id", "kept_id")
EMBEDDING_FIELD = "embedding"
EXACT_AT = "at"
"""Payload key of the event's time as the engine's float (a follower's decay pass
recomputes weights at exactly that time)."""


class LogContent(StrEnum):
    """How much of a memory's text the log keeps."""

    FULL = "full"
    REDACTED = "redacted"
    NONE = "none"


def parse_log_content(value: str | LogContent) -> LogContent:
    try:
        return LogContent(value)
    except ValueError:
        allowed = ", ".join(m.value for m in LogContent)
        raise ConfigError("log_content", value, f"must be one of {allowed}") from None


@dataclass(frozen=True, slots=True)
class EventEncoder:
    """Turns an ``AtlasEvent`` into an ``EventRecord`` under one privacy policy."""

    atlas_id: str
    log_content: LogContent = LogContent.FULL
    scrubber: PiiScrubber | None = None
    user_id: str | None = None

    def encode(self, event: AtlasEvent, *, seq: int | None = None) -> EventRecord:
        """The record of ``event``; ``seq`` is its position in the atlas's stream."""
        fields = _shallow_record(event)
        if self.log_content is not LogContent.FULL or self.scrubber is not None:
            fields.pop(EMBEDDING_FIELD, None)
        kind = type(event).type
        at_epoch = float(fields.pop("at"))
        at = to_datetime(at_epoch)
        session_id = fields.pop("session_id", None)
        user_id = fields.pop("user_id", None) or self.user_id
        node_id = next((fields[f] for f in NODE_FIELDS if fields.get(f)), None)
        fields.pop("node_id", None)
        reason = fields.get("reason")
        if isinstance(reason, EvictionReason):
            fields.pop("reason")
        else:
            reason = None
        weights = self._weights(node_id, fields)
        payload = _json_safe(fields)
        payload[EXACT_AT] = at_epoch  # the column keeps microseconds; replay needs the float
        content = self._content(kind, payload)
        if self.scrubber is not None:
            payload = self.scrubber.scrub_value(payload)
        return EventRecord(
            atlas_id=self.atlas_id,
            type=kind,
            at=at,
            session_id=_opt(session_id),
            node_id=_opt(node_id),
            user_id=_opt(user_id),
            reason=None if reason is None else str(reason),
            payload=payload,
            content=content,
            weights=weights,
            seq=seq,
        )

    @staticmethod
    def _weights(node_id: str | None, fields: dict[str, Any]) -> dict[str, float]:
        """Per-node weights to sample; a decay pass's map leaves the payload."""
        weights = fields.pop("weights", None)
        if isinstance(weights, dict):
            return {storable(str(k)): float(v) for k, v in weights.items() if _finite(v)}
        weight = fields.get("weight")
        if node_id is not None and isinstance(weight, (int, float)) and _finite(weight):
            return {storable(node_id): float(weight)}
        return {}

    def _content(self, kind: str, payload: dict[str, Any]) -> str | None:
        """Pop the text out of the payload and apply the policy to it."""
        text = next((payload.pop(f) for f in CONTENT_FIELDS if f in payload), None)
        if self.log_content is not LogContent.FULL and isinstance(payload.get("metadata"), dict):
            # metadata is the memory's own data too: only its keys survive redaction
            keys = sorted(payload.pop("metadata"))
            if self.log_content is LogContent.REDACTED:
                payload["metadata_keys"] = keys
        if not isinstance(text, str):
            return None
        if self.log_content is LogContent.REDACTED:
            payload["content_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
            payload["content_length"] = len(text)
            payload["content_kind"] = str(payload.get("kind", kind))
            return None
        if self.log_content is LogContent.NONE:
            return None
        return self.scrubber.scrub(text) if self.scrubber is not None else text


_FIELD_NAMES: dict[type[AtlasEvent], tuple[str, ...]] = {}


def _shallow_record(event: AtlasEvent) -> dict[str, Any]:
    """``event.to_record()`` without its deep copy (a third of the sink's CPU time);
    ``_json_safe`` copies the containers afterwards anyway."""
    cls = type(event)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclass_fields(event))
    return {name: getattr(event, name) for name in names}


def storable(text: str) -> str:
    """PostgreSQL text cannot hold NUL characters; they become U+FFFD on every engine."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _opt(text: Any) -> str | None:
    return None if text is None else storable(str(text))


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _json_safe(value: Any) -> Any:
    """JSON-ready copy: enums become strings, tuples lists, non-finite floats null."""
    if isinstance(value, StrEnum):
        return str(value)
    if isinstance(value, dict):
        return {storable(str(k)): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if value is None or isinstance(value, (int, bool)):
        return value
    item = getattr(value, "item", None)  # numpy scalars
    return _json_safe(item()) if callable(item) else str(value)
