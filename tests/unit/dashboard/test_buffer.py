import threading

import pytest

from memory_core.dashboard.buffer import EventBuffer
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.config import AtlasConfig
from memory_core.engine.events import MemoryAdded, MemoryEvicted, MemoryReinforced, SessionEnded
from memory_core.engine.model import MemoryKind
from memory_core.errors import InputError
from memory_core.testing import HashingEmbedder, ManualClock


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


def test_a_purge_forgets_the_sessions_buffered_events() -> None:
    clock = ManualClock(1_000.0)
    atlas = ElasticMemoryAtlas(
        AtlasConfig(decay_interval_seconds=0), embedder=HashingEmbedder(64), clock=clock
    )
    buf = EventBuffer()
    atlas.subscribe(buf)
    secret = atlas.add("my bank PIN is 4921", session_id="private", metadata={"pin": "4921"})
    atlas.add("and my password is hunter2", session_id="private")
    kept = atlas.add("the team meets at 9:30", session_id="work")
    atlas.retrieve("PIN", session_id="private")
    atlas.retrieve("meeting", session_id="work")
    clock.advance(3600.0)
    atlas.decay()
    assert any(secret.id in getattr(e, "weights", {}) for e in buf.events(types=("decay",)))

    atlas.end_session("private", mode="purge")

    text = repr(buf.events())
    assert (
        "4921" not in text
        and "hunter2" not in text
        and secret.id not in repr(buf.events(types=("decay", "added", "reinforced")))
    )
    evictions = [e for e in buf.events(types=("evicted",)) if isinstance(e, MemoryEvicted)]
    assert sorted(e.session_id or "" for e in evictions) == ["private", "private"]
    assert all(e.content == "" and not e.metadata for e in evictions)
    assert [e.type for e in buf.events(types=("session_end",))] == ["session_end"]
    assert [e.node_id for e in buf.for_node(kept.id) if isinstance(e, MemoryAdded)] == [kept.id]
    assert len(buf.events(types=("reinforced",))) >= 1  # the work session's read stays


def test_events_after_a_purge_are_kept_and_numbered_on() -> None:
    buf = EventBuffer()
    buf(added("a"))
    before = buf.last_seq
    buf(SessionEnded(at=2.0, session_id="gone", mode="purge", affected=0))
    buf(added("b"))
    assert buf.last_seq == before + 2
    assert [e.type for e in buf.events()] == ["added", "session_end", "added"]
