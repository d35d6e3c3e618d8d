"""Events: every kind is published with the right fields; broken subscribers are harmless."""

from __future__ import annotations

import logging

import pytest

from memory_core import (
    AtlasEvent,
    DecayApplied,
    EventBus,
    EvictionReason,
    MemoriesMerged,
    MemoryAdded,
    MemoryEvicted,
    MemoryKind,
    MemoryPressure,
    MemoryRead,
    MemoryReinforced,
    MemoryStatus,
    SessionEnded,
    StatusChanged,
    SummaryCreated,
)
from memory_core.engine import forgetting
from memory_core.engine.events import (
    EVENT_TYPES,
    ConfigChanged,
    MemoryLinked,
    RuleFired,
)
from memory_core.testing import EventRecorder

from .conftest import START, AtlasFactory


def test_every_event_type_is_registered_and_serialisable() -> None:
    assert set(EVENT_TYPES) == {
        "added",
        "reinforced",
        "decay",
        "evicted",
        "merged",
        "status",
        "summary",
        "session_end",
        "memory_pressure",
        "read",
        "rule",
        "updated",
        "linked",
        "config",
    }
    record = SessionEnded(at=1.0, session_id="s", mode="purge", affected=2).to_record()
    assert record == {
        "at": 1.0,
        "session_id": "s",
        "mode": "purge",
        "affected": 2,
        "rows": {},
        "type": "session_end",
    }


def test_all_kinds_emitted_with_fields(
    make_atlas: AtlasFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    atlas, clock = make_atlas(
        link_threshold=1.0,
        working_memory_size=0,
        decay_interval_seconds=0,
        merge_threshold=0.95,
        memory_watermark=0.9,
    )
    rec = EventRecorder()
    atlas.subscribe(rec)

    a = atlas.add(
        "User prefers window seats",
        session_id="s",
        metadata={"type": "preference"},
        provenance=["t1"],
    )
    added = rec.of_type("added")[0]
    assert isinstance(added, MemoryAdded)
    assert (added.node_id, added.session_id, added.content, added.kind) == (
        a.id,
        "s",
        a.content,
        MemoryKind.SESSION,
    )
    assert (added.weight, added.provenance, added.at) == (a.weight, ("t1",), START)
    assert added.importance == pytest.approx(a.importance, rel=1e-6)  # stored as float32
    b = atlas.add("User is allergic to peanuts", session_id="s", links_to=[a.id])
    assert rec.of_type("added")[1].links == (a.id,)  # type: ignore[attr-defined]

    clock.advance(10)
    hits = atlas.retrieve("window seats", session_id="s", top_k=1)
    reinforced = rec.of_type("reinforced")[-1]
    assert isinstance(reinforced, MemoryReinforced)
    assert (reinforced.node_id, reinforced.access_count, reinforced.at) == (a.id, 1, START + 10)
    assert reinforced.strength == pytest.approx(hits[0].node.strength)

    again = atlas.add("User prefers window seats", session_id="s", provenance=["t2"])
    merged = rec.of_type("merged")[0]
    assert isinstance(merged, MemoriesMerged)
    assert (merged.kept_id, merged.merged_id, merged.merged_content) == (
        again.id,
        None,
        again.content,
    )
    assert merged.similarity == pytest.approx(1.0, abs=1e-5)

    atlas.set_status(b.id, MemoryStatus.SUPERSEDED, reason="newer fact")
    status = rec.of_type("status")[0]
    assert isinstance(status, StatusChanged)
    assert (status.node_id, status.old, status.new, status.reason) == (
        b.id,
        MemoryStatus.ACTIVE,
        MemoryStatus.SUPERSEDED,
        "newer fact",
    )

    short = atlas.add("Gate closes at noon", session_id="s", ttl_hours=1.0)
    clock.advance(3600)
    atlas.decay()
    decay = rec.of_type("decay")[0]
    assert isinstance(decay, DecayApplied)
    assert decay.strategy == atlas.config.decay_strategy
    assert decay.nodes == 3
    assert set(decay.weights) == {a.id, b.id, short.id}
    assert decay.min_weight <= decay.mean_weight <= decay.max_weight
    evicted = rec.of_type("evicted")[0]
    assert isinstance(evicted, MemoryEvicted)
    assert (evicted.node_id, evicted.reason, evicted.content, evicted.kind) == (
        short.id,
        EvictionReason.EXPIRED,
        "Gate closes at noon",
        MemoryKind.SESSION,
    )
    assert (evicted.created_at, evicted.access_count) == (START + 10, 0)

    c = atlas.add("User lives in Lyon", session_id="s")
    summary = atlas.summarize_session("s")
    assert summary is not None
    created = rec.of_type("summary")[0]
    assert isinstance(created, SummaryCreated)
    assert created.node_id == summary.id
    assert set(created.source_ids) == {a.id, c.id}  # b is superseded: not summarised

    atlas.end_session("s", mode="keep")
    ended = rec.of_type("session_end")[0]
    assert isinstance(ended, SessionEnded)
    assert (ended.session_id, ended.mode, ended.affected) == ("s", "keep", 4)

    atlas.link(a.id, c.id, "causal", 0.5)
    linked = rec.of_type("linked")[0]
    assert isinstance(linked, MemoryLinked)
    assert (linked.node_id, linked.target_id, linked.relation, linked.strength) == (
        a.id,
        c.id,
        "causal",
        0.5,
    )
    atlas.pin(c.id)
    atlas.set_confidence(c.id, 0.5)
    assert [e.node_id for e in rec.of_type("updated")] == [c.id, c.id]  # type: ignore[attr-defined]
    atlas.reconfigure(atlas.config)
    changed = rec.of_type("config")[0]
    assert isinstance(changed, ConfigChanged) and changed.config == atlas.config.to_dict()

    monkeypatch.setattr(forgetting, "_memory_used", lambda: 0.99)
    atlas.decay()
    pressure = rec.of_type("memory_pressure")[0]
    assert isinstance(pressure, MemoryPressure)
    assert pressure.rss_fraction == pytest.approx(0.99)
    # every type but the agent's reads, which the MCP server publishes (test_mcp_server),
    # and the agent loop's rules (tests/unit/agent/test_rules.py)
    assert {type(e) for e in rec.events} >= set(EVENT_TYPES.values()) - {MemoryRead, RuleFired}
    assert all(e.at >= START for e in rec.events)
    for event in rec.events:
        assert event.to_record()["type"] == event.type


def test_raising_subscriber_does_not_break_the_atlas(
    make_atlas: AtlasFactory, caplog: pytest.LogCaptureFixture
) -> None:
    atlas, _ = make_atlas()
    calls: list[str] = []

    def broken(event: AtlasEvent) -> None:
        calls.append(event.type)
        raise RuntimeError("listener bug")

    atlas.subscribe(broken)
    rec = EventRecorder()
    atlas.subscribe(rec)
    with caplog.at_level(logging.ERROR, logger="memory_core.engine.events"):
        node = atlas.add("User prefers window seats", session_id="s")
        hits = atlas.retrieve("window", session_id="s")
    assert node.id in atlas
    assert hits[0].node.id == node.id
    assert calls[:2] == ["added", "reinforced"]
    assert [e.type for e in rec.events] == calls  # later subscribers still get everything
    assert "listener bug" in caplog.text


def test_unsubscribe_and_quiet_bus(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas()
    rec = EventRecorder()
    unsubscribe = atlas.subscribe(rec)
    atlas.add("first", session_id="s")
    unsubscribe()
    unsubscribe()
    atlas.add("second", session_id="s")
    assert len(rec.events) == 1
    assert not atlas.events.active
    bus = EventBus()
    bus.publish(SessionEnded(at=0.0, mode="keep", affected=0))  # nobody listens: no error


def test_a_subscriber_of_some_types_gets_those_alone_and_the_rest_are_not_built(
    make_atlas: AtlasFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    atlas, _ = make_atlas()
    adds, everything = EventRecorder(), EventRecorder()
    stop_adds = atlas.subscribe(adds, (MemoryAdded, MemoryEvicted))
    bus = atlas.events
    assert bus.wants(MemoryAdded) and bus.wants(MemoryEvicted) and bus.active
    assert not bus.wants(MemoryReinforced) and not bus.wants(DecayApplied)
    built: list[str] = []
    made = MemoryReinforced.__init__

    def counted(self: MemoryReinforced, *args: object, **kwargs: object) -> None:
        built.append(self.type)
        made(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryReinforced, "__init__", counted)
    node = atlas.add("the courier comes on Tuesdays", session_id="s")
    atlas.retrieve("courier", session_id="s")  # reinforces: an event no one reads
    atlas.decay()
    assert [e.node_id for e in adds.events] == [node.id]  # type: ignore[attr-defined]
    assert built == []
    stop_everything = atlas.subscribe(everything)
    assert bus.wants(MemoryReinforced) and bus.wants(ConfigChanged)
    atlas.retrieve("courier", session_id="s")
    assert built == ["reinforced"] and [e.type for e in adds.events] == ["added"]
    assert "reinforced" in [e.type for e in everything.events]
    stop_everything()
    assert not bus.wants(MemoryReinforced) and bus.wants(MemoryAdded)
    stop_adds()
    assert not bus.active and not bus.wants(MemoryAdded)
