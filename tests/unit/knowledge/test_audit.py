from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memory_core.engine.clock import ManualClock
from memory_core.knowledge import ItemStatus, KnowledgeBase, ReviewAction
from memory_core.knowledge.models import KnowledgeItemRow

from .conftest import record

DAY = 86_400.0


@pytest.fixture
def kb(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    return make_kb(trusted_sources=frozenset({"HR_API"}))


def _add(kb: KnowledgeBase, **overrides: object) -> str:
    with kb.unit() as unit:
        item = unit.items.submit(record(**overrides)).item
    assert item is not None
    return item.id


def test_status_counts(kb: KnowledgeBase) -> None:
    _add(kb, key="a")
    _add(kb, key="b", source_name="Wiki")
    with kb.unit() as unit:
        counts = unit.audit.status_counts()
    assert counts == {
        ItemStatus.ACTIVE: 1,
        ItemStatus.PENDING_REVIEW: 1,
        ItemStatus.DEPRECATED: 0,
        ItemStatus.EXPIRED: 0,
    }


def test_stale_items(kb: KnowledgeBase, clock: ManualClock) -> None:
    old = _add(kb, key="old")
    clock.advance(50 * DAY)
    new = _add(kb, key="new")
    clock.advance(45 * DAY)
    with kb.unit() as unit:
        assert [i.id for i in unit.audit.stale()] == [old]  # 95 > 90 days
        assert [i.id for i in unit.audit.stale(days=30)] == [old, new]
        assert unit.audit.stale(days=100) == []


def test_expired_but_still_cited(kb: KnowledgeBase, clock: ManualClock) -> None:
    item_id = _add(kb, expires_at="2025-07-01")
    quiet = _add(kb, key="quiet", expires_at="2025-07-01")
    with kb.unit() as unit:
        unit.feedback.cite(item_id, cited_by_id="before-expiry")
        unit.feedback.cite(quiet, cited_by_id="before-expiry")
        assert unit.audit.expired_but_cited() == []
    clock.set(datetime(2025, 8, 1, tzinfo=UTC))
    with kb.unit() as unit:
        unit.feedback.cite(item_id, cited_by_id="after-1")
        unit.feedback.cite(item_id, cited_by_id="after-2")
        found = unit.audit.expired_but_cited()
    assert [(i.id, n) for i, n in found] == [(item_id, 2)]


def test_low_confidence(kb: KnowledgeBase) -> None:
    low = _add(kb, key="low", confidence=0.4)
    _add(kb, key="high", confidence=0.9)
    with kb.unit() as unit:
        assert [i.id for i in unit.audit.low_confidence()] == [low]
        assert len(unit.audit.low_confidence(threshold=0.95)) == 2


def test_conflicting_active_versions(kb: KnowledgeBase) -> None:
    v1 = _add(kb, version="1", expires_at="2025-12-31")
    v2 = _add(kb, version="2", source_name="Wiki", effective_from="2025-03-01")
    with kb.unit() as unit:
        assert unit.audit.conflicts() == []
        # two syncs that raced: both think they are the version in force
        unit.items.row(v2).status = ItemStatus.ACTIVE.value
        unit.items.row(v1).status = ItemStatus.ACTIVE.value
    with kb.unit() as unit:
        (conflict,) = unit.audit.conflicts()
    assert (conflict.first.id, conflict.second.id) == (v1, v2)
    assert conflict.overlap == (
        datetime(2025, 3, 1, tzinfo=UTC),
        datetime(2025, 12, 31, tzinfo=UTC),
    )
    assert "overlapping validity 2025-03-01 .. 2025-12-31" in conflict.reason


def test_scheduled_handover_is_reported_without_overlap(kb: KnowledgeBase) -> None:
    _add(kb, version="1")
    _add(kb, version="2", effective_from="2025-09-01")  # trusted: approved, v1 capped
    with kb.unit() as unit:
        (conflict,) = unit.audit.conflicts()
    assert conflict.overlap is None and "do not overlap" in conflict.reason


def test_item_detail_has_history_diffs_citations_and_audit(kb: KnowledgeBase) -> None:
    v1 = _add(kb, version="1", content="Five days.")
    with kb.unit() as unit:
        unit.feedback.cite(v1, cited_by_id="mem-1")
    v2 = _add(kb, version="2", content="Six days.")
    with kb.unit() as unit:
        detail = unit.audit.detail(v1)
    assert detail.item.id == v1 and [v.id for v in detail.versions] == [v1, v2]
    assert [(s.from_version, s.to_version) for s in detail.history] == [(None, "1"), ("1", "2")]
    assert "-Five days." in detail.history[1].diff and "+Six days." in detail.history[1].diff
    assert [c.cited_by_id for c in detail.citations] == ["mem-1"]
    assert detail.citations[0].needs_review  # flagged when v2 took over
    assert ReviewAction.SUPERSEDE in [e.action for e in detail.audit]


def test_row_to_item_round_trips_timezones(kb: KnowledgeBase) -> None:
    item_id = _add(kb, effective_from="2024-01-01T08:00:00+08:00")
    with kb.unit() as unit:
        row: KnowledgeItemRow = unit.items.row(item_id)
        item = row.to_item()
    assert item.effective_from == datetime(2024, 1, 1, tzinfo=UTC)
    assert item.effective_from.tzinfo is not None and item.created_at.tzinfo is not None
