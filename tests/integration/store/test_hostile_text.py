"""Text no database likes goes through the sink on both engines without blocking it."""

from __future__ import annotations

import pytest

from memory_core.engine.events import MemoryAdded
from memory_core.engine.model import MemoryKind
from memory_core.store import EventFilter, EventSink

pytestmark = pytest.mark.integration

HOSTILE = {
    "script": "<script>window.pwned=1</script><img src=x onerror=alert(1)>",
    "nul": "before\x00after",
    "control": "bell\x07 escape\x1b[31m tab\t cr\r",
    "mixed": "Ελληνικά 中文 العربية עברית 😀 e\u0301",
    "long": "x" * 200_000,
    "quote": "Robert'); DROP TABLE events;--",
}


def added(node_id: str, content: str, **kw: object) -> MemoryAdded:
    values: dict[str, object] = {
        "at": 1_700_000_000.0,
        "session_id": "s1",
        "node_id": node_id,
        "content": content,
        "kind": MemoryKind.SESSION,
        "weight": 1.0,
        "importance": 0.5,
    }
    values.update(kw)
    return MemoryAdded(**values)  # type: ignore[arg-type]


def test_hostile_text_is_stored_verbatim_or_safely(database) -> None:  # type: ignore[no-untyped-def]
    with EventSink(database, flush_interval=60) as sink:
        for name, text in HOSTILE.items():
            sink(added(name, text))
        sink(added("surrogate", "lone \ud800 surrogate"))  # not encodable: refused, skipped
        sink(added("after", "the event after a refused one"))
        sink.flush(timeout=30)
        assert sink.rejected == 1 and sink.healthy
    stored = {e.node_id: e.content for e in database.events.query(limit=100).items}
    assert set(stored) == {*HOSTILE, "after"}
    for name, text in HOSTILE.items():
        expected = text.replace("\x00", "\ufffd")  # PostgreSQL text cannot hold NUL
        assert stored[name] == expected, name
    hits = database.events.query(EventFilter(text="DROP TABLE")).items
    assert [e.node_id for e in hits] == ["quote"]
