"""A user's task context graph, spanning sessions, through the store and snapshots: each
version names the session that wrote it and the one that first made it; erasing a
session takes out what it said or changed (in memory, SQLite and PostgreSQL the same as
``ContextGraph.without_session`` in the process), erasing the user takes the graph; graphs
kept per session before still load."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import inspect, text

from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import EntityMention, TurnFacts
from memory_core.context.graph import ContextGraph
from memory_core.context.query import active_constraints
from memory_core.context.update import TaskContext
from memory_core.errors import NotFoundError
from memory_core.store import ContextEdgeRecord, ContextNodeRecord, Store, open_database
from memory_core.store.context_io import (
    PER_SESSION_FORMAT,
    graph_records,
    graphs_from_section,
    load_graph,
    save_graph,
    section_bytes,
)
from memory_core.store.engine import create_store_engine, resolve_url
from memory_core.store.migrate import downgrade

pytestmark = pytest.mark.integration

DAY = 1_721_563_200.0
WEEK = 7 * 86_400.0


def facts(intent: str = "state", at: float = DAY, **fields: object) -> TurnFacts:
    return TurnFacts(
        "", "user", at, intent, 1.0,
        fields.pop("goal", None), 0.9 if "goal" in fields else 0.0,  # type: ignore[arg-type]
        tuple(fields.pop("slots", ())), tuple(fields.pop("entities", ())),  # type: ignore[arg-type]
    )  # fmt: skip


def cap(value: float) -> SlotValue:
    return SlotValue("user", "trip budget", f"{value:,.0f} EUR", "money", value, "EUR")


def user_trip() -> ContextGraph:
    """Ana's trip over three sessions: the cap set in s1, a diet said in s2, the cap
    raised in s3 (the first deprecated by s3's turn)."""
    ctx = TaskContext("ana")
    munich = EntityMention("Munich", "place")
    ctx.observe(
        facts(goal="plan a trip", slots=[cap(5000)], entities=[munich]),
        turn=0, memory_id="m0", session="s1",
    )  # fmt: skip
    diet = SlotValue("user", "meal preference", "vegetarian", topic="meal")
    ctx.observe(facts(slots=[diet], at=DAY + WEEK), turn=1, memory_id="m1", session="s2")
    ctx.observe(
        facts("change", slots=[cap(6000)], at=DAY + 2 * WEEK), turn=2, memory_id="m2", session="s3"
    )
    return ctx.graph


def in_force(graph: ContextGraph) -> list[tuple[str, str]]:
    return sorted((str(n.attr("slot")), str(n.attr("value"))) for n in active_constraints(graph))


def test_every_version_names_its_writer_and_its_origin() -> None:
    graph = user_trip()
    assert graph.sessions() == ["s1", "s2", "s3"]
    assert in_force(graph) == [("meal preference", "vegetarian"), ("trip budget", "6,000 EUR")]
    nodes, _ = graph_records(graph)
    old = [n for n in nodes if n.attributes.get("value") == "5,000 EUR"]
    assert [(n.version, n.session_id, n.origin_session_id, n.deprecated) for n in old] == [
        (1, "s1", "s1", False),
        (2, "s3", "s1", True),  # set in session 1, changed in session 3
    ]
    user = next(n for n in nodes if n.type == "User")
    assert user.session_id is None  # the user's own node goes only with the user


@pytest.mark.parametrize(
    ("session", "expected"),
    [
        ("s3", [("meal preference", "vegetarian"), ("trip budget", "5,000 EUR")]),
        ("s1", [("meal preference", "vegetarian"), ("trip budget", "6,000 EUR")]),
        ("s2", [("trip budget", "6,000 EUR")]),
    ],
)
def test_erasing_a_session_in_the_store_is_taking_it_out_of_the_graph(
    any_store: Store, session: str, expected: list[tuple[str, str]]
) -> None:
    graph = user_trip()
    save_graph(any_store.context_graphs, "g-ana", graph)
    any_store.erase(session_id=session)
    stored = load_graph(any_store.context_graphs, "g-ana")
    in_process = graph.without_session(session)
    assert in_force(stored) == in_force(in_process) == expected
    assert {n.id for n in stored.nodes(include_deprecated=True, include_soft_deleted=True)} == {
        n.id for n in in_process.nodes(include_deprecated=True, include_soft_deleted=True)
    }
    assert session not in stored.sessions() and session not in in_process.sessions()
    assert session not in json.dumps(stored.to_records())  # nothing it wrote or made is left
    if session == "s1":  # what s1 said is gone, its words with it
        assert "5,000" not in json.dumps(stored.to_records())
        assert not stored.nodes("Goal") and not stored.nodes("Entity")


def restated_cap() -> ContextGraph:
    """The same cap said in three sessions the same day: one node, each session's turn and
    memory added to its provenance, every later version copying the earlier ones'."""
    ctx = TaskContext("ana")
    for turn, session in enumerate(("s1", "s2", "s3")):
        ctx.observe(
            facts(goal="plan a trip", slots=[cap(5000)]),
            turn=turn, memory_id=f"m{turn}", session=session,
        )  # fmt: skip
    return ctx.graph


def provenance(graph: ContextGraph) -> dict[str, list[tuple[list[int], list[str]]]]:
    """Each node's and edge's versions' turns and memory ids, in log order."""
    found: dict[str, list[tuple[list[int], list[str]]]] = {}
    for record in graph.to_records():
        ident = f"{record['id']}:{record.get('source', '')}"
        found.setdefault(ident, []).append((record["turns"], record["memories"]))
    return found


@pytest.mark.parametrize("build", [user_trip, restated_cap])
@pytest.mark.parametrize("session", ["s1", "s2", "s3"])
def test_erasing_a_session_takes_its_turns_out_of_the_rows_that_stay(
    any_store: Store, build: Any, session: str
) -> None:
    """No row of another session keeps the erased session's turn numbers or memory ids,
    as in the process (``ContextGraph.without_session``)."""
    graph = build()
    save_graph(any_store.context_graphs, "g-ana", graph)
    any_store.erase(session_id=session)
    stored = load_graph(any_store.context_graphs, "g-ana")
    gone_turn, gone_memory = int(session[1]) - 1, f"m{int(session[1]) - 1}"
    assert provenance(stored) == provenance(graph.without_session(session))
    for turns, memories in (v for versions in provenance(stored).values() for v in versions):
        assert gone_turn not in turns and gone_memory not in memories


def test_erasing_the_user_takes_the_whole_graph(any_store: Store) -> None:
    save_graph(any_store.context_graphs, "g-ana", user_trip())
    assert any_store.erase(user_id="ana")["context_nodes"] > 0
    with pytest.raises(NotFoundError):
        load_graph(any_store.context_graphs, "g-ana")


def test_a_per_session_snapshot_section_loads_under_its_session_scope() -> None:
    ctx = TaskContext("trip")
    ctx.observe(facts(slots=[cap(5000)]), turn=0, memory_id="m0")  # written before: no session
    old = json.loads(section_bytes({"trip": ctx.graph}))
    old["format"] = PER_SESSION_FORMAT
    graphs = graphs_from_section(json.dumps(old).encode())
    assert list(graphs) == ["session:trip"]
    assert graphs["session:trip"].sessions() == ["trip"]
    assert in_force(graphs["session:trip"]) == [("trip budget", "5,000 EUR")]
    assert graphs["session:trip"].without_session("trip").nodes("Constraint") == []


def test_rows_stored_per_session_before_the_migration_load_and_erase(db_url: str) -> None:
    """A database at ``0401_context_graph`` (graphs per session, no origin column) upgrades;
    its rows load with their session as every version's writer and erase by it."""
    open_database(db_url).close()
    engine = create_store_engine(resolve_url(db_url))
    try:
        downgrade(engine, "0401_context_graph")
        columns = {c["name"] for c in inspect(engine).get_columns("context_nodes")}
        assert "origin_session_id" not in columns
        ctx = TaskContext("trip")
        ctx.observe(facts(goal="plan a trip", slots=[cap(5000)]), turn=0, memory_id="m0")
        nodes, edges = graph_records(ctx.graph, session_id="trip")
        with engine.begin() as connection:
            records: list[ContextNodeRecord | ContextEdgeRecord] = [*nodes, *edges]
            for record in records:
                table, row = _row_before_0402(record)
                names, values = ", ".join(row), ", ".join(f":{k}" for k in row)
                connection.execute(text(f"INSERT INTO {table} ({names}) VALUES ({values})"), row)
    finally:
        engine.dispose()
    db = open_database(db_url)  # upgrades to head
    try:
        back = load_graph(db.context_graphs, "old")
        assert back.sessions() == ["trip"] and in_force(back) == [("trip budget", "5,000 EUR")]
        assert back.to_records() == [{**r, "session": "trip"} for r in ctx.graph.to_records()]
        db.erase(session_id="trip")
        with pytest.raises(NotFoundError):
            load_graph(db.context_graphs, "old")
    finally:
        db.close()


def _row_before_0402(record: ContextNodeRecord | ContextEdgeRecord) -> tuple[str, dict[str, Any]]:
    """The table and row a per-session graph's version was stored as (no origin column)."""
    own: dict[str, Any] = (
        {"key": record.key}
        if isinstance(record, ContextNodeRecord)
        else {"source": record.source, "target": record.target}
    )
    row = {
        "graph_id": "old", "id": record.id, "version": record.version, "seq": record.seq,
        "type": record.type, "label": record.label,
        "attributes": json.dumps(dict(record.attributes)), "user_id": record.user_id,
        "session_id": record.session_id, "recorded_at": record.recorded_at,
        "valid_at": record.valid_at, "invalid_at": record.invalid_at,
        "expired_at": record.expired_at, "deprecated": record.deprecated,
        "soft_deleted": record.soft_deleted, "turns": json.dumps(list(record.turns)),
        "memory_ids": json.dumps(list(record.memory_ids)), **own,
    }  # fmt: skip
    table = "context_nodes" if isinstance(record, ContextNodeRecord) else "context_edges"
    return table, row
