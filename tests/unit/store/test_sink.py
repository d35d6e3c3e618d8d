"""EventSink: non-blocking enqueue, batched background writes, retry without loss."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas
from memory_core.engine.events import EventBus, MemoryReinforced
from memory_core.errors import InputError, StoreError, StoreUnavailableError
from memory_core.store import EventFilter, EventRecord, EventSink, MemoryStore
from memory_core.store.memory import MemoryEventRepository
from memory_core.store.sink import SETTLE, settle_wait
from memory_core.testing import HashingEmbedder, ManualClock


def event(i: int) -> MemoryReinforced:
    return MemoryReinforced(
        at=1_700_000_000.0 + i,
        session_id="s",
        node_id=f"n{i}",
        weight=1.0,
        strength=1.0,
        access_count=i,
    )


class FlakyEvents(MemoryEventRepository):
    """Event repository that fails while ``down`` is set and notes the writing threads."""

    def __init__(self) -> None:
        super().__init__()
        self.down = threading.Event()
        self.gate = threading.Event()
        self.gate.set()
        self.threads: set[str] = set()
        self.batches: list[int] = []

    def append(self, records: Sequence[EventRecord]) -> int:
        self.gate.wait()
        self.threads.add(threading.current_thread().name)
        if self.down.is_set():
            raise StoreUnavailableError("append events: database unavailable: disk is full")
        self.batches.append(len(records))
        return super().append(records)


class FlakyStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self._events = FlakyEvents()

    @property
    def events(self) -> FlakyEvents:
        assert isinstance(self._events, FlakyEvents)
        return self._events


def until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def node_order(store: MemoryStore) -> list[str | None]:
    page = store.events.query(order_by="id", descending=False, limit=10_000)
    return [e.node_id for e in page.items]


@pytest.fixture
def store() -> FlakyStore:
    return FlakyStore()


def test_flush_writes_everything_in_order_on_the_writer_thread(store: FlakyStore) -> None:
    with EventSink(store, atlas_id="a1", flush_interval=60, batch_size=7) as sink:
        for i in range(50):
            sink(event(i))
        sink.flush(timeout=5)
        assert sink.pending == 0 and sink.written == 50 and sink.healthy
    assert node_order(store) == [f"n{i}" for i in range(50)]
    assert max(store.events.batches) <= 7
    assert threading.current_thread().name not in store.events.threads
    assert store.atlases.get("a1").kind == "live"


def test_enqueue_never_waits_for_a_blocked_database(store: FlakyStore) -> None:
    """5000 enqueues all return while the writer hangs inside ``append``.

    No clock is read: if an enqueue waited for the database, the loop could never finish while
    the gate stays closed, and the join below reports it (its timeout only bounds a hang).
    """
    store.events.gate.clear()  # the writer will hang inside append
    sink = EventSink(store, flush_interval=0.01, batch_size=10)
    try:
        sink(event(0))
        assert until(lambda: sink.pending == 1 and store.events.gate.is_set() is False)
        time.sleep(0.05)  # writer is now stuck in append

        def enqueue_rest() -> None:
            for i in range(1, 5001):
                sink(event(i))

        producer = threading.Thread(target=enqueue_rest, daemon=True)
        producer.start()
        producer.join(timeout=60)
        assert not producer.is_alive(), "an enqueue waited for the blocked database"
        assert not store.events.gate.is_set(), "the database was still blocked throughout"
        assert sink.pending == 5001
    finally:
        store.events.gate.set()
        sink.close()
    assert store.events.count() == 5001


def test_batch_size_or_interval_triggers_a_write_without_flush(store: FlakyStore) -> None:
    with EventSink(store, flush_interval=60, batch_size=10) as sink:
        for i in range(10):
            sink(event(i))
        assert until(lambda: store.events.count() == 10)
    with EventSink(store, flush_interval=0.05, batch_size=1000) as sink:
        sink(event(99))
        assert until(lambda: store.events.count() == 11, timeout=2)


def test_outage_buffers_retries_and_loses_nothing(store: FlakyStore) -> None:
    store.events.down.set()
    sink = EventSink(store, flush_interval=0.02, batch_size=5, retry_initial=0.01, retry_max=0.05)
    try:
        for i in range(23):
            sink(event(i))
        assert until(lambda: not sink.healthy)
        assert "disk is full" in (sink.last_error or "")
        with pytest.raises(StoreUnavailableError, match="not written"):
            sink.flush(timeout=0.2)
        for i in range(23, 40):  # the engine keeps producing during the outage
            sink(event(i))
        assert sink.pending == 40 and store.events.count() == 0
        store.events.down.clear()
        sink.flush(timeout=5)
        status = sink.status()
        assert status["healthy"] and status["pending"] == 0 and status["failures"] >= 1
        assert status["dropped"] == 0 and status["written"] == 40
    finally:
        sink.close()
    assert node_order(store) == [f"n{i}" for i in range(40)]  # once each, in order


def test_buffer_bound_drops_oldest_and_counts_them(store: FlakyStore) -> None:
    store.events.down.set()
    sink = EventSink(store, flush_interval=60, batch_size=100, max_buffer=5)
    for i in range(20):
        sink(event(i))
    assert sink.dropped == 15 and sink.pending == 5
    store.events.down.clear()
    sink.close()
    assert node_order(store) == [f"n{i}" for i in range(15, 20)]


def test_close_flushes_detaches_and_is_idempotent(store: FlakyStore) -> None:
    bus = EventBus()
    sink = EventSink(store, flush_interval=60).attach(bus)
    with pytest.raises(InputError, match="already attached"):
        sink.attach(bus)
    for i in range(3):
        bus.publish(event(i))
    sink.close()
    sink.close()
    assert store.events.count() == 3
    assert not bus.active  # unsubscribed
    sink(event(9))
    assert sink.dropped == 1 and store.events.count() == 3


def test_close_gives_up_when_the_database_stays_down(store: FlakyStore) -> None:
    store.events.down.set()
    sink = EventSink(store, flush_interval=0.01, retry_initial=0.01, retry_max=0.02)
    sink(event(1))
    start = time.monotonic()
    sink.close(timeout=0.3)
    assert time.monotonic() - start < 3
    assert store.events.count() == 0 and sink.pending == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"flush_interval": 0}, "flush_interval"),
        ({"batch_size": 2.5}, "batch_size"),
        ({"max_buffer": -1}, "max_buffer"),
        ({"retry_max": float("nan")}, "retry_max"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(InputError, match=field):
        EventSink(MemoryStore(), **kwargs)  # type: ignore[arg-type]


def test_real_atlas_events_reach_the_store() -> None:
    store = MemoryStore()
    clock = ManualClock(1_700_000_000.0)
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0, max_nodes=3, working_memory_size=0),
        embedder=HashingEmbedder(64),
        clock=clock,
    )
    with EventSink(store, atlas_id="live-1", flush_interval=60).attach(atlas) as sink:
        first = atlas.add("Alice drinks green tea every morning", session_id="s1")
        for text in ("Bob plays chess", "Carol likes jazz", "Dan runs marathons"):
            clock.advance(60)
            atlas.add(text, session_id="s1")
        atlas.retrieve("green tea", session_id="s1")
        clock.advance(3600)
        atlas.decay()
        sink.flush()
    types = {e.type for e in store.events.query(limit=1000).items}
    assert {"added", "evicted", "decay"} <= types
    assert store.events.count(EventFilter(types=("added",))) == 4
    evicted = store.events.query(EventFilter(types=("evicted",))).items
    assert evicted and all(e.reason == "capacity" for e in evicted)
    history = store.events.weight_history(first.id)
    assert history and history[0].source == "added"


class PickyEvents(MemoryEventRepository):
    """Refuses any batch holding an event for node ``bad`` (a value the DB cannot store)."""

    def append(self, records: Sequence[EventRecord]) -> int:
        if any(r.node_id == "bad" for r in records):
            raise StoreError("append events: value too long for type character varying(64)")
        return super().append(records)


def test_a_refused_record_is_skipped_not_retried_forever() -> None:
    store = MemoryStore()
    store._events = PickyEvents()
    with EventSink(store, flush_interval=60) as sink:
        for i in range(5):
            sink(event(i))
        sink(replace(event(5), node_id="bad"))
        for i in range(6, 9):
            sink(event(i))
        sink.flush(timeout=5)
        assert sink.rejected == 1 and sink.written == 8 and sink.healthy
    assert node_order(store) == [f"n{i}" for i in range(9) if i != 5]


def test_flushing_an_idle_sink_does_not_spin(
    store: FlakyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    idle_rounds = 0
    original = EventSink._maybe_heartbeat

    def counting(self: EventSink) -> None:
        nonlocal idle_rounds
        idle_rounds += 1
        original(self)

    monkeypatch.setattr(EventSink, "_maybe_heartbeat", counting)
    with EventSink(store, flush_interval=60) as sink:
        sink.flush(timeout=5)  # nothing to flush
        time.sleep(0.3)
        assert idle_rounds <= 2, f"writer looped {idle_rounds} times while idle"
        sink(event(1))
        sink.flush(timeout=5)
    assert store.events.count() == 1


def test_a_due_write_waits_for_the_calls_events_to_settle() -> None:
    # due at 10.0, interval 1.0: before it, wait for it; after it, until SETTLE has passed
    # since the last event; never past 11.0 (a steady stream is still written)
    assert settle_wait(9.5, 10.0, 9.4, 1.0) == pytest.approx(0.5)
    assert settle_wait(10.0, 10.0, 10.0 - 2 * SETTLE, 1.0) <= 0  # quiet already
    assert settle_wait(10.001, 10.0, 10.0, 1.0) == pytest.approx(SETTLE - 0.001)
    assert settle_wait(10.9995, 10.0, 10.999, 1.0) == pytest.approx(0.0005)  # the cap
    assert settle_wait(11.0, 10.0, 10.9999, 1.0) <= 0


def test_events_that_never_pause_are_still_written(store: FlakyStore) -> None:
    # an event every millisecond never leaves SETTLE quiet: the cap makes the writes
    with EventSink(store, flush_interval=0.02, batch_size=100_000) as sink:
        stop, sent = time.monotonic() + 10.0, 0
        while not store.events.batches and time.monotonic() < stop:
            sink(event(sent))
            sent += 1
            time.sleep(0.001)
        assert store.events.batches  # written while the stream went on, not at close
    assert store.events.count() == sent
