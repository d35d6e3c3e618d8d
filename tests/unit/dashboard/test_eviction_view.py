import csv
import io
from datetime import UTC, datetime

import pytest

from memory_core.dashboard.eviction_view import (
    EvictionQuery,
    EvictionRow,
    RestoreLedger,
    empty_text,
    matching_rows,
    query_rows,
    row_from_event,
    time_range,
    to_csv,
)
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import MemoryEvicted
from memory_core.engine.model import EvictionReason, MemoryKind
from memory_core.errors import InputError
from memory_core.testing import EventRecorder


def row(
    i: int, reason: str = "below_threshold", session: str = "s1", content: str | None = "text"
) -> EvictionRow:
    return EvictionRow(
        at=1_000.0 + i, node_id=f"m{i:02d}", session_id=session, reason=reason, kind="session",
        weight=0.1 + i / 100, age_hours=float(i), access_count=i, content=content,
    )  # fmt: skip


ROWS = [
    row(i, "orphan" if i % 3 == 0 else "below_threshold", f"s{i % 2}", f"memory {i}")
    for i in range(30)
]


def test_filters_combine() -> None:
    q = EvictionQuery(reasons=("orphan",), session_id="s0", text="MEMORY 1")
    got = matching_rows(ROWS, q)
    assert [r.node_id for r in got] == ["m18", "m12"]
    window = EvictionQuery(
        since=datetime.fromtimestamp(1_005, UTC), until=datetime.fromtimestamp(1_008, UTC)
    )
    assert sorted(r.node_id for r in matching_rows(ROWS, window)) == ["m05", "m06", "m07"]


def test_sorting_and_paging() -> None:
    page = query_rows(ROWS, EvictionQuery(sort_by="weight", descending=False, page=1, page_size=10))
    assert page.total == 30 and page.pages == 3
    assert [r.node_id for r in page.rows] == [f"m{i:02d}" for i in range(10, 20)]
    last = query_rows(ROWS, EvictionQuery(page=2, page_size=10))
    assert [r.node_id for r in last.rows][-1] == "m00"  # newest first by default


def test_missing_values_sort_last() -> None:
    rows = [row(1), EvictionRow(2_000.0, "mx", "s1", "orphan", "session", None, None, None, "x")]
    assert [r.node_id for r in matching_rows(rows, EvictionQuery(sort_by="weight"))] == [
        "m01",
        "mx",
    ]


def test_csv_has_a_header_every_row_and_defused_formulas() -> None:
    data = to_csv([*ROWS[:2], row(99, content="=HYPERLINK(1)")]).decode("utf-8")
    records = list(csv.DictReader(io.StringIO(data)))
    assert len(records) == 3 and records[0]["node_id"] == "m00"
    assert records[2]["content"] == "'=HYPERLINK(1)"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"reasons": ("nope",)}, "reasons"),
        ({"sort_by": "colour"}, "sort_by"),
        ({"page": -1}, "page"),
        ({"page_size": 0}, "page_size"),
        ({"since": datetime(2024, 1, 1)}, "since"),
    ],
)
def test_rejects_bad_queries(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError, match=field):
        EvictionQuery(**kwargs)  # type: ignore[arg-type]


def test_restore_adds_the_content_back_once(atlas: ElasticMemoryAtlas) -> None:
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    node = atlas.add("the fair is in Riem", session_id="s1", kind=MemoryKind.EPISODIC)
    atlas.delete(node.id)
    event = recorder.of_type("evicted")[0]
    assert isinstance(event, MemoryEvicted) and event.reason is EvictionReason.FORGOTTEN
    evicted = row_from_event(event)
    ledger = RestoreLedger()
    first = ledger.restore(atlas, evicted)
    second = ledger.restore(atlas, evicted)
    assert not first.already_restored and second.already_restored
    assert first.node.id == second.node.id and len(atlas) == 1
    restored = atlas.get(first.node.id)
    assert restored.content == "the fair is in Riem" and restored.kind is MemoryKind.EPISODIC
    assert restored.metadata["restored_from"] == node.id and node.id in restored.provenance


def test_restore_without_logged_content_is_refused(atlas: ElasticMemoryAtlas) -> None:
    with pytest.raises(InputError, match="content"):
        RestoreLedger().restore(atlas, row(1, content=None))
    assert len(atlas) == 0


def test_database_log_filters_pages_and_maps_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memory_core.dashboard.eviction_view import query_database
    from memory_core.dashboard.live import LiveSystem
    from memory_core.testing import HashingEmbedder

    system = LiveSystem(
        embedder=HashingEmbedder(), record=True, database_url=f"sqlite:///{tmp_path / 'a.db'}"
    )
    try:
        nodes = [
            system.atlas.add(f"logged memory {i} words {i}", session_id="s1") for i in range(3)
        ]
        for node in nodes:
            system.atlas.delete(node.id)
        assert system.recording.sink is not None and system.recording.db is not None
        system.recording.sink.flush(timeout=30)
        events = system.recording.db.events
        page = query_database(events, EvictionQuery(page_size=2))
        assert page.total == 3 and len(page.rows) == 2 and page.pages == 2
        only = query_database(events, EvictionQuery(text="memory 1"))
        assert [r.node_id for r in only.rows] == [nodes[1].id]
        assert (
            only.rows[0].content == "logged memory 1 words 1" and only.rows[0].reason == "forgotten"
        )
        with pytest.raises(InputError, match="sort_by"):
            query_database(events, EvictionQuery(sort_by="weight"))
    finally:
        system.close()


def test_purged_rows_are_erased_hidden_by_default_and_say_so(atlas: ElasticMemoryAtlas) -> None:
    from memory_core.dashboard.buffer import EventBuffer
    from memory_core.dashboard.eviction_view import ERASED_TEXT, forgotten_total, query_events

    buffer = EventBuffer()
    atlas.subscribe(buffer)
    atlas.add("my passport number is X123", session_id="private")
    atlas.add("keep this one", session_id="other")
    atlas.end_session("private", mode="purge")
    events = [e for e in buffer.events(types=("evicted",)) if isinstance(e, MemoryEvicted)]
    (purged,) = [row_from_event(e) for e in events]
    assert purged.erased and purged.content is None and not purged.restorable
    assert purged.display_record()["content"] == ERASED_TEXT
    assert query_events(events, EvictionQuery()).total == 0
    assert query_events(events, EvictionQuery(include_erased=True)).rows == (purged,)
    stats = atlas.stats()
    assert stats["evicted_total"] == 1 and forgotten_total(stats) == 0  # a purge is not forgetting


def test_time_range_spans_whole_minutes_only_when_worth_a_slider() -> None:
    low, high = time_range([row(0), row(89)]) or (None, None)  # 1000.0 .. 1089.0
    assert (low, high) == (datetime.fromtimestamp(960, UTC), datetime.fromtimestamp(1_140, UTC))
    assert time_range([row(0), row(59)]) is None  # under a minute
    assert time_range([]) is None


def test_the_empty_page_names_what_hides_the_evictions_counted_beside_it() -> None:
    assert empty_text([], EvictionQuery()).startswith("No eviction yet in this run")
    q = EvictionQuery(reasons=("capacity",), text="memory 1")
    assert query_rows(ROWS, q).total == 0
    text = empty_text(ROWS, q)
    assert text.startswith("None of the 30 evictions in this run match the filters:")
    assert "reason hides 30" in text and "text hides 19" in text  # memory 1, 10-19 match
    erased = [row(i, content=None) for i in range(4)]
    assert "erased text" in empty_text(erased, EvictionQuery())
    assert "erased" not in empty_text(erased, EvictionQuery(include_erased=True, text="x"))


def test_a_skipped_years_evictions_stay_inside_the_full_time_range() -> None:
    """Issue #25: evictions at the newest instant must match the slider's untouched range."""
    rows = [row(0), *(row(365 * 24 * 3600 + 17) for _ in range(3))]
    low, high = time_range(rows) or (None, None)
    assert low is not None and high is not None
    step = 60.0  # the page's slider step: its values are low + k * step
    assert (high.timestamp() - low.timestamp()) % step == 0
    q = EvictionQuery(since=low, until=high)
    assert query_rows(rows, q).total == len(rows)
