from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memory_core.engine.clock import ManualClock
from memory_core.errors import InputError, NotFoundError
from memory_core.knowledge import CitedBy, ItemStatus, KnowledgeBase, ReviewAction

from .conftest import record


@pytest.fixture
def trusted(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    return make_kb(trusted_sources=frozenset({"HR_API"}))


def _active(kb: KnowledgeBase, **overrides: object) -> str:
    with kb.unit() as unit:
        item = unit.items.submit(record(**overrides)).item
    assert item is not None and item.status is ItemStatus.ACTIVE
    return item.id


def test_citation_is_recorded_and_counted(trusted: KnowledgeBase) -> None:
    item_id = _active(trusted)
    with trusted.unit() as unit:
        citation = unit.feedback.cite(item_id, cited_by_id="mem-1", session_id="s1")
        unit.feedback.cite(item_id, cited_by_id="ep-1", cited_by_kind=CitedBy.EPISODE)
        item = unit.items.get(item_id)
        listed = unit.feedback.citations(item_id)
    assert item.citation_count == 2
    assert citation.item_key == "policy.leave" and citation.item_version == "3.1"
    assert citation.at == datetime(2025, 6, 1, tzinfo=UTC) and not citation.needs_review
    assert [c.cited_by_id for c in listed] == ["mem-1", "ep-1"]


def test_citation_input_errors(trusted: KnowledgeBase) -> None:
    item_id = _active(trusted)
    with trusted.unit() as unit:
        with pytest.raises(InputError, match="cited_by_id"):
            unit.feedback.cite(item_id, cited_by_id=" ")
        with pytest.raises(NotFoundError):
            unit.feedback.cite("missing", cited_by_id="m")
        with pytest.raises(InputError, match="timezone-aware"):
            unit.feedback.cite(item_id, cited_by_id="m", at=datetime(2024, 1, 1))


def test_three_consecutive_wrongs_send_item_back_to_review(trusted: KnowledgeBase) -> None:
    item_id = _active(trusted)
    with trusted.unit() as unit:
        for _ in range(2):
            unit.feedback.feedback(item_id, correct=False)
        unit.feedback.feedback(item_id, correct=True)  # streak broken
        for _ in range(2):
            assert unit.feedback.feedback(item_id, correct=False).status is ItemStatus.ACTIVE
        item = unit.feedback.feedback(item_id, correct=False, actor="user-9")
        log = unit.items.audit_log(item_id)
    assert item.status is ItemStatus.PENDING_REVIEW
    assert (item.feedback_wrong, item.feedback_correct, item.consecutive_wrong) == (5, 1, 3)
    assert log[-1].action is ReviewAction.FEEDBACK_DEMOTE and log[-1].actor == "user-9"


def test_threshold_is_configurable(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb(trusted_sources=frozenset({"HR_API"}), wrong_threshold=1)
    item_id = _active(kb)
    with kb.unit() as unit:
        assert unit.feedback.feedback(item_id, correct=False).status is ItemStatus.PENDING_REVIEW


def test_reapproval_resets_the_wrong_streak(trusted: KnowledgeBase) -> None:
    item_id = _active(trusted)
    with trusted.unit() as unit:
        for _ in range(3):
            unit.feedback.feedback(item_id, correct=False)
        item = unit.items.approve(item_id, reviewer="alice", note="checked with HR")
    assert item.status is ItemStatus.ACTIVE and item.consecutive_wrong == 0


def test_new_version_flags_citations_and_episodes(trusted: KnowledgeBase) -> None:
    v1 = _active(trusted)
    with trusted.unit() as unit:
        episode = unit.episodes.start("answer a leave question")
        unit.feedback.cite(v1, cited_by_id=episode.id, cited_by_kind=CitedBy.EPISODE)
        unit.feedback.cite(v1, cited_by_id="mem-7")
        assert unit.feedback.flagged_citations() == []
    v2 = _active(trusted, version="3.2", content="Six days of annual leave.")
    with trusted.unit() as unit:
        flagged = unit.feedback.flagged_citations()
        reviewed_episode = unit.episodes.get(episode.id)
        unit.feedback.cite(v2, cited_by_id="mem-8")
    assert {c.cited_by_id for c in flagged} == {episode.id, "mem-7"}
    assert all(c.item_version == "3.1" for c in flagged)
    assert "policy.leave changed to v3.2" in (flagged[0].flag_reason or "")
    assert reviewed_episode.needs_review


def test_resolving_a_flag(trusted: KnowledgeBase) -> None:
    v1 = _active(trusted)
    with trusted.unit() as unit:
        cid = unit.feedback.cite(v1, cited_by_id="mem-7").id
        unit.items.expire(v1, reviewer="alice")
        assert [c.id for c in unit.feedback.flagged_citations()] == [cid]
        with pytest.raises(InputError, match="reviewer"):
            unit.feedback.resolve_flag(cid, reviewer="")
        resolved = unit.feedback.resolve_flag(cid, reviewer="bob")
        assert unit.feedback.flagged_citations() == []
    assert not resolved.needs_review and "resolved by bob" in (resolved.flag_reason or "")


def test_historic_citation_time(trusted: KnowledgeBase, clock: ManualClock) -> None:
    item_id = _active(trusted)
    with trusted.unit() as unit:
        c = unit.feedback.cite(item_id, cited_by_id="m", at="2024-03-01T10:00:00Z")
    assert c.at == datetime(2024, 3, 1, 10, tzinfo=UTC)
