import threading

import pytest

from memory_core.dashboard.buffer import EventBuffer
from memory_core.errors import InputError
from memory_core.events import MemoryAdded, MemoryReinforced
from memory_core.model import MemoryKind


def added(node_id: str, at: float = 1.0) -> MemoryAdded:
    return MemoryAdded(
        at=at, node_id=node_id, content="x", kind=MemoryKind.SESSION, weight=1.0, importance=0.5
    )


def test_keeps_the_newest_events_and_counts_what_fell_out() -> None:
    buf = EventBuffer(capacity=3)
    for i in range(5):
        buf(added(f"m{i}"))
    assert [e.node_id for e in buf.events()] == ["m2", "m3", "m4"]  # type: ignore[attr-defined]
    assert buf.last_seq == 5
    assert buf.dropped == 2


def test_filters_by_type_sequence_and_node() -> None:
    buf = EventBuffer()
    buf(added("a"))
    buf(MemoryReinforced(at=2.0, node_id="a", weight=1.2, strength=1.1, access_count=1))
    buf(added("b"))
    assert len(buf.events(types=("reinforced",))) == 1
    assert [e.type for e in buf.events(since_seq=1)] == ["reinforced", "added"]
    assert [e.type for e in buf.for_node("a")] == ["added", "reinforced"]


def test_concurrent_writers_lose_nothing() -> None:
    buf = EventBuffer()

    def write() -> None:
        for _ in range(1_000):
            buf(added("x"))

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert buf.last_seq == len(buf) == 4_000


@pytest.mark.parametrize("capacity", [0, -1, 2.5, True])
def test_rejects_bad_capacity(capacity: object) -> None:
    with pytest.raises(InputError, match="capacity"):
        EventBuffer(capacity)  # type: ignore[arg-type]
