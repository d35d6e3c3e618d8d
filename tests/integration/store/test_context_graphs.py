"""Context graph versions in memory, SQLite and PostgreSQL: one contract, erase, schema."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import inspect
from support.schema import schema_drift

import memory_core.store.models  # noqa: F401  (context tables in Base.metadata)
from memory_core.errors import InputError, NotFoundError
from memory_core.store import ContextEdgeRecord, ContextNodeRecord, Store, open_database
from memory_core.store.engine import Database, create_store_engine, resolve_url
from memory_core.store.migrate import downgrade

pytestmark = pytest.mark.integration

T0 = 1_784_626_200.123456789  # atlas clock seconds: read back exactly
TABLES = {"context_nodes", "context_edges"}


def hotel_graph(session: str = "trip", user: str = "ana") -> tuple[list, list]:  # type: ignore[type-arg]
    """A goal, the hotel limit said twice (the first version deprecated), one entity."""
    goal = ContextNodeRecord(
        id="g-trip", version=0, seq=0, type="Goal", label="book a trip to Lisbon", key="trip lisbon",
        user_id=user, session_id=session, valid_at=T0, turns=(0,), memory_ids=("m0",),
    )  # fmt: skip
    limit = ContextNodeRecord(
        id="c-hotel", version=0, seq=1, type="Constraint", label="hotel limit: 150 EUR per night",
        attributes={"slot": "hotel limit", "value": "150 EUR per night", "amount": 150.0},
        user_id=user, session_id=session, valid_at=T0, turns=(1,), memory_ids=("m1",),
    )  # fmt: skip
    replaced = replace(
        limit,
        version=1,
        seq=5,
        deprecated=True,
        invalid_at=T0 + 300.0,
        expired_at=T0 + 300.0,
    )
    raised = ContextNodeRecord(
        id="c-hotel-180", version=0, seq=4, type="Constraint", label="hotel limit: 180 EUR per night",
        attributes={"slot": "hotel limit", "value": "180 EUR per night", "amount": 180.0},
        user_id=user, session_id=session, valid_at=T0 + 300.0,
        turns=(4, 5), memory_ids=("m4", "m5"), recorded_at=T0 + 300.0,
    )  # fmt: skip
    city = ContextNodeRecord(
        id="e-lisbon", version=0, seq=2, type="Entity", label="Lisbon", attributes={"kind": "GPE"},
        user_id=user, session_id=session, valid_at=T0, turns=(0,), memory_ids=("m0",),
    )  # fmt: skip
    edges = [
        ContextEdgeRecord(
            id="g-trip>c-hotel",
            version=0,
            seq=3,
            type="SATISFIES",
            source="g-trip",
            target="c-hotel",
            user_id=user,
            session_id=session,
            valid_at=T0,
            turns=(1,),
        ),
        ContextEdgeRecord(
            id="c-hotel-180>c-hotel",
            version=0,
            seq=6,
            type="CONFLICTS_WITH",
            source="c-hotel-180",
            label="hotel limit 180 EUR replaces 150 EUR",
            target="c-hotel",
            user_id=user,
            session_id=session,
            turns=(4,),
            memory_ids=("m4",),
        ),
        ContextEdgeRecord(
            id="g-trip>e-lisbon",
            version=0,
            seq=7,
            type="REFERENCES",
            source="g-trip",
            target="e-lisbon",
            user_id=user,
            session_id=session,
            soft_deleted=True,
        ),
    ]
    return [goal, limit, replaced, raised, city], edges


def test_every_version_round_trips(any_store: Store) -> None:
    nodes, edges = hotel_graph()
    repo = any_store.context_graphs
    assert repo.save("atlas-1", nodes, edges) == 8
    stored = repo.load("atlas-1")
    assert list(stored.nodes) == sorted(nodes, key=lambda n: n.seq)  # log order
    assert list(stored.edges) == sorted(edges, key=lambda e: e.seq)
    assert stored.nodes[1].valid_at == T0 and stored.nodes[1].id == "c-hotel"
    assert repo.graph_ids() == ["atlas-1"]


def test_saving_again_replaces_only_the_versions_given(any_store: Store) -> None:
    nodes, edges = hotel_graph()
    repo = any_store.context_graphs
    repo.save("atlas-1", nodes, edges)
    forgotten = replace(nodes[-1], soft_deleted=True)
    repo.save("atlas-1", [forgotten])
    stored = repo.load("atlas-1")
    assert len(stored.nodes) == 5 and len(stored.edges) == 3
    assert {n.id: n.soft_deleted for n in stored.nodes}["e-lisbon"] is True


def test_graphs_are_apart_and_deleted_whole(any_store: Store) -> None:
    repo = any_store.context_graphs
    nodes, edges = hotel_graph()
    repo.save("atlas-1", nodes, edges)
    repo.save("atlas-2", nodes[:1])
    assert repo.graph_ids() == ["atlas-1", "atlas-2"]
    assert [n.id for n in repo.load("atlas-2").nodes] == ["g-trip"]
    assert repo.delete("atlas-1") == 8
    assert repo.delete("atlas-1") == 0
    with pytest.raises(NotFoundError):
        repo.load("atlas-1")


def test_a_bad_record_is_refused_whole(any_store: Store) -> None:
    repo = any_store.context_graphs
    nodes, edges = hotel_graph()
    bad = replace(edges[0], type="LIKES")
    with pytest.raises(InputError, match=r"edges\[1\]\.type: 'LIKES' is not one of"):
        repo.save("atlas-1", nodes, [edges[1], bad])
    with pytest.raises(InputError, match="given twice"):
        repo.save("atlas-1", [nodes[0], nodes[0]])
    with pytest.raises(InputError, match=r"nodes\[0\]\.valid_at: must be a finite number"):
        repo.save("atlas-1", [replace(nodes[0], valid_at=float("nan"))])
    assert repo.graph_ids() == []


def test_erase_by_session_and_by_user(any_store: Store) -> None:
    repo = any_store.context_graphs
    mine, my_edges = hotel_graph(session="trip", user="ana")
    theirs = [replace(n, id=n.id + "-bo", session_id="other", user_id="bo") for n in mine]
    repo.save("atlas-1", mine + theirs, my_edges)
    deleted = any_store.erase(session_id="trip")
    assert deleted["context_nodes"] == 5 and deleted["context_edges"] == 3
    assert {n.user_id for n in repo.load("atlas-1").nodes} == {"bo"}
    assert any_store.erase(user_id="bo")["context_nodes"] == 5
    assert repo.graph_ids() == []


def test_models_and_migration_agree(database: Database) -> None:
    assert set(inspect(database.engine).get_table_names()) >= TABLES
    assert schema_drift(database.engine, TABLES) == []


def test_downgrade_drops_the_tables_and_upgrade_brings_them_back(db_url: str) -> None:
    open_database(db_url).close()
    engine = create_store_engine(resolve_url(db_url))
    try:
        downgrade(engine, "0301_event_seq")
        assert not TABLES & set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    db = open_database(db_url)
    try:
        nodes, edges = hotel_graph()
        db.context_graphs.save("g", nodes, edges)
        assert len(db.context_graphs.load("g").nodes) == 5
    finally:
        db.close()
