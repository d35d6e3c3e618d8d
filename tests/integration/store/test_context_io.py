"""A real task context graph through the store (memory, SQLite, PostgreSQL) and through
snapshot files and stored snapshots: every version back, in order, equal."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import EntityMention, TurnFacts
from memory_core.context.query import active_constraints
from memory_core.context.update import TaskContext
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.errors import InputError, NotFoundError
from memory_core.store import Store
from memory_core.store.context_io import (
    SECTION,
    graph_key,
    graph_records,
    graphs_from_section,
    graphs_in_snapshot,
    load_graph,
    load_snapshot_with_context,
    save_graph,
    save_snapshot_with_context,
    section_bytes,
)
from memory_core.store.memory import MemorySnapshotRepository
from memory_core.store.recording import open_recorded, record_snapshot
from memory_core.testing import HashingEmbedder, ManualClock, atlas_differences

pytestmark = pytest.mark.integration

DAY = 1_721_563_200.123


def facts(intent: str = "state", **fields: object) -> TurnFacts:
    return TurnFacts(
        "", "user", float(fields.pop("at", DAY)), intent, 1.0,  # type: ignore[arg-type]
        fields.pop("goal", None), 0.9 if "goal" in fields else 0.0,  # type: ignore[arg-type]
        tuple(fields.pop("slots", ())), tuple(fields.pop("entities", ())),  # type: ignore[arg-type]
        fields.pop("forget_topic", None),  # type: ignore[arg-type]
    )  # fmt: skip


def trip() -> TaskContext:
    """A goal, an entity, a hotel limit raised (the first deprecated), a PIN forgotten."""
    ctx = TaskContext("ana")
    hotel = EntityMention("Hotel Avenida", "hotel", (("city", "Lisbon"),))
    limit = SlotValue("user", "hotel limit", "150 EUR", "money", 150.0, "EUR", "night")
    ctx.observe(facts(goal="book a trip", slots=[limit], entities=[hotel]), turn=0, memory_id="m0")
    raised = SlotValue("user", "hotel limit", "180 EUR", "money", 180.0, "EUR", "night")
    ctx.observe(facts("change", slots=[raised], at=DAY + 60), turn=1, memory_id="m1")
    pin = SlotValue("user", "door code", "4411", topic="door")
    ctx.observe(facts(slots=[pin], at=DAY + 120), turn=2, memory_id="m2")
    ctx.observe(facts("forget", forget_topic="door", at=DAY + 180), turn=3)
    return ctx


def test_the_sample_has_what_the_round_trips_must_keep() -> None:
    nodes, edges = graph_records(trip().graph, session_id="s1")
    assert {n.type for n in nodes} == {"User", "Goal", "Entity", "Constraint"}
    assert any(n.deprecated for n in nodes) and any(n.soft_deleted for n in nodes)
    assert any(e.deprecated for e in edges) and any(n.version > 1 for n in nodes)
    assert [r.seq for r in sorted([*nodes, *edges], key=lambda r: r.seq)] == list(
        range(len(nodes) + len(edges))
    )


def test_every_version_through_the_store_in_order(any_store: Store) -> None:
    graph = trip().graph  # a graph that names no session: stored as the one session's
    written = save_graph(any_store.context_graphs, "atlas-1", graph, session_id="s1")
    assert written == len(graph.to_records())
    back = load_graph(any_store.context_graphs, "atlas-1")
    assert back.user == "ana"
    said_in_s1 = [{**r, "session": "s1"} for r in graph.to_records()]
    assert back.to_records() == said_in_s1
    assert [n.attr("value") for n in active_constraints(back)] == ["180 EUR"]
    save_graph(any_store.context_graphs, "atlas-1", graph, session_id="s1")  # idempotent
    assert load_graph(any_store.context_graphs, "atlas-1").to_records() == said_in_s1
    assert graph_key("atlas-1", "s1") != graph_key("atlas-1", "s2")
    assert len(graph_key("a" * 64, "s" * 64)) <= 64
    any_store.erase(session_id="s1")
    with pytest.raises(NotFoundError):
        load_graph(any_store.context_graphs, "atlas-1")


def atlas_with_memories() -> ElasticMemoryAtlas:
    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder(), clock=ManualClock(DAY))
    atlas.add("I want to book a trip, hotel up to 150 EUR a night", session_id="s1")
    atlas.add("Make that 180 EUR a night", session_id="s1")
    return atlas


def test_a_snapshot_file_carries_the_graph(tmp_path: Path) -> None:
    atlas, graph = atlas_with_memories(), trip().graph
    other = TaskContext("bo").graph
    path = save_snapshot_with_context(atlas, {"s1": graph, "s2": other}, tmp_path / "atlas.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["atlas.npz"]  # no temp left behind
    loaded, back = load_snapshot_with_context(path, embedder=HashingEmbedder())
    assert atlas_differences(atlas, loaded) == []
    assert sorted(back) == ["s1", "s2"] and back["s2"].user == "bo"
    assert back["s1"].to_records() == graph.to_records()
    with zipfile.ZipFile(path) as archive:
        assert f"section/{SECTION}" in archive.namelist()
    bare = atlas.save_snapshot(tmp_path / "bare.npz")
    assert graphs_in_snapshot(bare) == {}


def test_a_stored_snapshot_carries_the_graph() -> None:
    atlas, graph = atlas_with_memories(), trip().graph
    repo = MemorySnapshotRepository()
    info = record_snapshot(
        atlas,
        repo,
        atlas_id="a1",
        label="manual",
        sections=lambda: {SECTION: section_bytes({"s1": graph})},
    )
    assert atlas_differences(atlas, open_recorded(repo, info.id, embedder=HashingEmbedder())) == []
    copy = graphs_from_section(_section_of(repo.data(info.id)))["s1"]
    assert copy.to_records() == graph.to_records()


def _section_of(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read(f"section/{SECTION}")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"\xff", "is not JSON"),
        (b'{"format": "other"}', "must be an atlas-context/2 document"),
        (b'{"format": "atlas-context/1"}', "needs a 'graphs' list"),
        (b'{"format": "atlas-context/1", "graphs": [{"name": "s", "user": 3}]}', "needs 'name'"),
        (
            b'{"format": "atlas-context/1", "graphs": [{"name": "s", "user": "u", '
            b'"records": [{"record": "node"}]}]}',
            r"records\[0\]",
        ),
    ],
)
def test_a_broken_section_is_refused_by_name(data: bytes, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        graphs_from_section(data)
