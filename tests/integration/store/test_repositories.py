"""One contract for every store: in memory, SQLite file and a real PostgreSQL."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from memory_core.errors import InputError, NotFoundError
from memory_core.store import EventFilter, EventRecord, Store
from memory_core.store.snapshots import PART_BYTES

pytestmark = pytest.mark.integration

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def rec(i: int, **kw: object) -> EventRecord:
    values: dict[str, object] = {
        "atlas_id": "atlas-a",
        "type": "added",
        "at": T0 + timedelta(minutes=i),
        "session_id": f"s{i % 3}",
        "node_id": f"n{i}",
        "payload": {"i": i},
    }
    values.update(kw)
    return EventRecord(**values)  # type: ignore[arg-type]


def sample_log(store: Store) -> None:
    store.events.append(
        [
            rec(0, content="Alice likes green tea", weights={"n0": 1.0}),
            rec(1, type="reinforced", node_id="n0", weights={"n0": 1.2}),
            rec(2, type="evicted", reason="capacity", content="Old note about Paris", user_id="u1"),
            rec(3, type="evicted", reason="orphan", content="paris again", session_id=None),
            rec(4, type="evicted", reason="capacity", content=None, atlas_id="atlas-b"),
            rec(5, type="decay", node_id=None, weights={"n0": 0.9, "n1": 0.4}),
            rec(6, type="status", user_id="u1"),
        ]
    )


def ids(page: object) -> list[int]:
    return [int(e.payload["i"]) for e in page.items]  # type: ignore[attr-defined]


def test_append_and_read_back_round_trips_every_field(any_store: Store) -> None:
    r = rec(7, user_id="u9", reason="merged", content="x", payload={"k": [1, "a"], "f": 0.5})
    assert any_store.events.append([r]) == 1
    (got,) = any_store.events.query().items
    assert got == any_store.events.get(got.id)
    assert (got.atlas_id, got.type, got.session_id, got.node_id) == ("atlas-a", "added", "s1", "n7")
    assert (got.user_id, got.reason, got.content) == ("u9", "merged", "x")
    assert got.payload == {"k": [1, "a"], "f": 0.5}
    assert got.at == r.at and got.at.tzinfo is not None and got.at.utcoffset() == timedelta(0)


def test_empty_append_writes_nothing(any_store: Store) -> None:
    assert any_store.events.append([]) == 0
    assert any_store.events.count() == 0


def test_filters_combine(any_store: Store) -> None:
    sample_log(any_store)
    q = any_store.events.query
    assert ids(q(EventFilter(types=("evicted",)), order_by="at", descending=False)) == [2, 3, 4]
    assert ids(q(EventFilter(reasons=("capacity",)))) == [4, 2]
    assert ids(q(EventFilter(atlas_id="atlas-b"))) == [4]
    assert ids(q(EventFilter(session_id="s0"))) == [6, 0]
    assert ids(q(EventFilter(node_id="n0"))) == [1, 0]
    assert ids(q(EventFilter(user_id="u1"))) == [6, 2]
    window = EventFilter(since=T0 + timedelta(minutes=2), until=T0 + timedelta(minutes=4))
    assert ids(q(window)) == [3, 2]  # since inclusive, until exclusive
    assert ids(q(EventFilter(text="PARIS"))) == [3, 2]  # case-insensitive, content only
    assert ids(q(EventFilter(text="50%_"))) == []  # LIKE wildcards are literal
    both = EventFilter(types=("evicted",), reasons=("capacity",), atlas_id="atlas-a", text="paris")
    assert ids(q(both)) == [2]
    assert any_store.events.count(EventFilter(types=("evicted",))) == 3


def test_pages_partition_the_result(any_store: Store) -> None:
    any_store.events.append([rec(i, at=T0 + timedelta(minutes=i // 3)) for i in range(25)])
    seen: list[int] = []
    for offset in range(0, 25, 7):
        page = any_store.events.query(offset=offset, limit=7, order_by="at", descending=False)
        assert page.total == 25 and (page.offset, page.limit) == (offset, 7)
        seen += ids(page)
    assert seen == list(range(25))  # equal times are ordered by id, no overlap, no gap


@pytest.mark.parametrize("descending", [False, True])
def test_sort_puts_missing_values_last(any_store: Store, descending: bool) -> None:
    any_store.events.append(
        [rec(0, reason="b"), rec(1, reason=None), rec(2, reason="a"), rec(3, reason="c")]
    )
    got = ids(any_store.events.query(order_by="reason", descending=descending))
    assert got == ([3, 0, 2, 1] if descending else [2, 0, 3, 1])


def test_bad_query_arguments_name_the_field(any_store: Store) -> None:
    with pytest.raises(InputError, match="limit"):
        any_store.events.query(limit=0)
    with pytest.raises(InputError, match="offset"):
        any_store.events.query(offset=-1)
    with pytest.raises(InputError, match="order_by"):
        any_store.events.query(order_by="content")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="since"):
        EventFilter(since=T0, until=T0 - timedelta(seconds=1))
    with pytest.raises(InputError, match="until"):
        EventFilter(until=datetime(2025, 1, 1))  # naive
    with pytest.raises(NotFoundError, match="event"):
        any_store.events.get(424242)


def test_weight_history_and_eviction_counts(any_store: Store) -> None:
    sample_log(any_store)
    history = any_store.events.weight_history("n0")
    assert [(p.weight, p.source) for p in history] == [
        (1.0, "added"),
        (1.2, "reinforced"),
        (0.9, "decay"),
    ]
    assert [p.at for p in history] == sorted(p.at for p in history)
    assert any_store.events.weight_history("n0", atlas_id="atlas-b") == []
    assert any_store.events.eviction_counts() == {"capacity": 2, "orphan": 1}
    assert any_store.events.eviction_counts(EventFilter(atlas_id="atlas-a")) == {
        "capacity": 1,
        "orphan": 1,
    }


def test_runs(any_store: Store) -> None:
    runs = any_store.runs
    first = runs.add(
        name="baseline",
        policy="seed-linear",
        params={"decay_rate": 0.05},
        metrics={"recall@5": 0.8},
        fact_results=[{"fact": "f1", "recalled": True}],
        conversations=["c1", "c2"],
        created_at=T0,
    )
    second = runs.add(
        name="tuned run", policy="tuned", params={}, metrics={}, created_at=T0 + timedelta(hours=1)
    )
    assert runs.get(first.id) == first
    assert first.fact_results == [{"fact": "f1", "recalled": True}]
    assert first.conversations == ["c1", "c2"]
    assert [r.id for r in runs.list().items] == [second.id, first.id]
    assert [r.id for r in runs.list(name_contains="TUNED").items] == [second.id]
    page = runs.list(offset=1, limit=1)
    assert page.total == 2 and [r.id for r in page.items] == [first.id]
    runs.delete(first.id)
    with pytest.raises(NotFoundError):
        runs.get(first.id)
    with pytest.raises(NotFoundError):
        runs.delete(first.id)
    with pytest.raises(InputError, match="name"):
        runs.add(name=" ", policy="p", params={}, metrics={})


def test_snapshots(any_store: Store) -> None:
    snaps = any_store.snapshots
    blob = bytes(range(256)) * 1000
    a = snaps.save(
        atlas_id="a1",
        label="before",
        data=blob,
        format_version=1,
        node_count=3,
        edge_count=2,
        sessions=["s2", "s1", "s1"],
    )
    b = snaps.save(
        atlas_id="a2", label="other", data=b"x", format_version=1, node_count=1, edge_count=0
    )
    assert a.sessions == ("s1", "s2") and a.size_bytes == len(blob)
    assert snaps.get(a.id) == a
    assert snaps.data(a.id) == blob
    listed = snaps.list().items
    assert listed == tuple(sorted([a, b], key=lambda i: (i.created_at, i.id), reverse=True))
    assert snaps.list(atlas_id="a1").items == (a,)
    snaps.delete(a.id)
    with pytest.raises(NotFoundError):
        snaps.data(a.id)
    with pytest.raises(InputError, match="data"):
        snaps.save(atlas_id="a1", label="x", data=b"", format_version=1, node_count=0, edge_count=0)
    with pytest.raises(InputError, match="node_count"):
        snaps.save(
            atlas_id="a1", label="x", data=b"1", format_version=1, node_count=-1, edge_count=0
        )


def test_a_snapshot_larger_than_a_part_round_trips(any_store: Store) -> None:
    # stored in pieces (SQL): three full parts and a short one, read back whole
    blob = bytes(range(251)) * ((3 * PART_BYTES + 1000) // 251)
    info = any_store.snapshots.save(
        atlas_id="a1", label="big", data=blob, format_version=2, node_count=1, edge_count=0
    )
    assert info.size_bytes == len(blob) and len(blob) > 3 * PART_BYTES
    assert any_store.snapshots.data(info.id) == blob
    any_store.snapshots.delete(info.id)
    with pytest.raises(NotFoundError):
        any_store.snapshots.data(info.id)


def test_atlas_registry(any_store: Store) -> None:
    reg = any_store.atlases
    first = reg.register("a1", name="agent one")
    reg.register("r1", name="recorded", kind="recorded")
    time.sleep(0.01)
    reg.heartbeat("a1")
    renamed = reg.register("a1", name="agent 1")
    assert renamed.created_at == first.created_at and renamed.last_seen > first.last_seen
    assert [a.id for a in reg.list()] == ["a1", "r1"]
    assert [a.id for a in reg.list(kind="recorded")] == ["r1"]
    with pytest.raises(NotFoundError):
        reg.heartbeat("nope")
    with pytest.raises(InputError, match="kind"):
        reg.register("x", name="x", kind="zombie")


def test_erase_session_removes_every_trace(any_store: Store) -> None:
    sample_log(any_store)
    kept = any_store.snapshots.save(
        atlas_id="a",
        label="k",
        data=b"1",
        format_version=1,
        node_count=1,
        edge_count=0,
        sessions=["s1"],
    )
    gone = any_store.snapshots.save(
        atlas_id="a",
        label="g",
        data=b"2" * (2 * PART_BYTES + 1),  # its bytes in parts: erased with the row
        format_version=1,
        node_count=1,
        edge_count=0,
        sessions=["s0", "s1"],
    )
    deleted = any_store.erase(session_id="s0")
    assert deleted["events"] == 2  # events 0 and 6; 3 has no session
    assert any_store.events.count(EventFilter(session_id="s0")) == 0
    assert any_store.events.weight_history("n0") == []  # decay samples of s0's node too
    assert [p.weight for p in any_store.events.weight_history("n1")] == [0.4]
    assert [s.id for s in any_store.snapshots.list().items] == [kept.id]
    with pytest.raises(NotFoundError):
        any_store.snapshots.data(gone.id)


def test_erase_user_and_bad_arguments(any_store: Store) -> None:
    sample_log(any_store)
    any_store.snapshots.save(
        atlas_id="a",
        label="g",
        data=b"2",
        format_version=1,
        node_count=1,
        edge_count=0,
        sessions=["s2"],
    )
    any_store.erase(user_id="u1")
    assert any_store.events.count(EventFilter(user_id="u1")) == 0
    assert any_store.events.count() == 5
    assert any_store.snapshots.list().total == 0  # u1 had events in session s2
    with pytest.raises(InputError, match="exactly one"):
        any_store.erase(session_id="s1", user_id="u1")
    with pytest.raises(InputError, match="exactly one"):
        any_store.erase()
