from collections.abc import Callable

import pytest

from memory_core.engine.clock import ManualClock
from memory_core.errors import InputError, NotFoundError
from memory_core.knowledge import EpisodeStatus, ItemStatus, KnowledgeBase, SourceKind

DAY = 86_400.0


def _completed(kb: KnowledgeBase, goal: str = "book Beijing to Shanghai trip") -> str:
    with kb.unit() as unit:
        episode = unit.episodes.start(goal, entities=["U-7821"], session_id="s1")
        unit.episodes.complete(
            episode.id,
            summary={"main_action": "book train", "outcome": "G101 booked"},
            key_decisions=[{"step": 3, "action": "choose G101", "reason": "user prefers rail"}],
            entities=["G101"],
        )
    return episode.id


def test_lifecycle_pending_to_completed(kb: KnowledgeBase) -> None:
    episode_id = _completed(kb)
    with kb.unit() as unit:
        episode = unit.episodes.get(episode_id)
        with pytest.raises(InputError, match="only pending episodes"):
            unit.episodes.fail(episode_id, failure_points=[{"step": 1}])
    assert episode.status is EpisodeStatus.COMPLETED
    assert episode.entities == ["G101", "U-7821"]
    assert episode.key_decisions[0]["action"] == "choose G101"
    assert episode.retention_score == 1.0 and episode.ended_at is not None


def test_failure_needs_failure_points(kb: KnowledgeBase) -> None:
    with kb.unit() as unit:
        episode = unit.episodes.start("refund order ORD-1")
        with pytest.raises(InputError, match="failure_points"):
            unit.episodes.fail(episode.id, failure_points=[])
        with pytest.raises(InputError, match=r"failure_points\[0\]"):
            unit.episodes.fail(episode.id, failure_points=["not a mapping"])  # type: ignore[list-item]
        failed = unit.episodes.fail(episode.id, failure_points=[{"step": 2, "error": "bad id"}])
    assert failed.status is EpisodeStatus.FAILED and failed.failure_points[0]["error"] == "bad id"


def test_input_errors(kb: KnowledgeBase) -> None:
    with kb.unit() as unit:
        with pytest.raises(InputError, match="goal"):
            unit.episodes.start("  ")
        with pytest.raises(NotFoundError):
            unit.episodes.get("nope")


def test_pending_too_long_is_aborted(kb: KnowledgeBase, clock: ManualClock) -> None:
    with kb.unit() as unit:
        stale = unit.episodes.start("slow task").id
    clock.advance(200)
    with kb.unit() as unit:
        fresh = unit.episodes.start("new task").id
    clock.advance(101)  # stale is 301 s old, fresh 101 s
    with kb.unit() as unit:
        report = unit.episodes.sweep()
        assert report.aborted == [stale]
        assert unit.episodes.get(stale).status is EpisodeStatus.ABORTED
        assert unit.episodes.get(fresh).status is EpisodeStatus.PENDING


def test_timeout_is_configurable(make_kb: Callable[..., KnowledgeBase], clock: ManualClock) -> None:
    kb = make_kb(episode_pending_timeout_s=3600)
    with kb.unit() as unit:
        unit.episodes.start("task")
    clock.advance(3599)
    with kb.unit() as unit:
        assert unit.episodes.sweep().aborted == []


def test_use_grows_retention_and_months_decay_it(kb: KnowledgeBase, clock: ManualClock) -> None:
    episode_id = _completed(kb)
    with kb.unit() as unit:
        for _ in range(3):
            unit.episodes.use(episode_id)
    clock.advance(29 * DAY)
    with kb.unit() as unit:
        assert unit.episodes.sweep().decayed == 0
        assert unit.episodes.get(episode_id).retention_score == pytest.approx(1.3)
    clock.advance(2 * DAY)  # first whole month
    with kb.unit() as unit:
        assert unit.episodes.sweep().decayed == 1
        assert unit.episodes.get(episode_id).retention_score == pytest.approx(1.1)
    clock.advance(60 * DAY)  # two more months in one sweep
    with kb.unit() as unit:
        unit.episodes.sweep()
        episode = unit.episodes.get(episode_id)
    assert episode.retention_score == pytest.approx(0.7) and episode.use_count == 3


def test_forgotten_episode_is_archived_into_the_review_queue(
    kb: KnowledgeBase, clock: ManualClock
) -> None:
    episode_id = _completed(kb)
    clock.advance(4 * 30 * DAY)  # 1.0 - 4 * 0.2 = 0.2 < 0.3
    with kb.unit() as unit:
        report = unit.episodes.sweep()
        episode = unit.episodes.get(episode_id)
        assert unit.episodes.find() == []
        assert [e.id for e in unit.episodes.find(include_archived=True)] == [episode_id]
        with pytest.raises(InputError, match="archived"):
            unit.episodes.use(episode_id)
        item = unit.items.get(episode.archived_item_id or "")
    assert report.archived == [episode_id]
    assert item.status is ItemStatus.PENDING_REVIEW
    assert item.source_kind is SourceKind.LEARNED_FROM_EPISODE
    assert item.key == f"episode.{episode_id}" and item.session_id == "s1"
    assert "Goal: book Beijing to Shanghai trip" in item.content
    assert "choose G101" in item.content
    with kb.unit() as unit:  # a second sweep archives nothing twice
        assert unit.episodes.sweep().archived == []


def test_pending_episodes_are_never_archived(
    make_kb: Callable[..., KnowledgeBase], clock: ManualClock
) -> None:
    kb = make_kb(episode_pending_timeout_s=1e9)
    with kb.unit() as unit:
        episode_id = unit.episodes.start("long running").id
    clock.advance(365 * DAY)
    with kb.unit() as unit:
        assert unit.episodes.sweep().archived == []
        assert unit.episodes.get(episode_id).status is EpisodeStatus.PENDING


def test_find_by_status_entity_and_review_flag(kb: KnowledgeBase) -> None:
    done = _completed(kb)
    with kb.unit() as unit:
        failed = unit.episodes.start("refund", entities=["ORD-1"]).id
        unit.episodes.fail(failed, failure_points=[{"error": "timeout"}])
        assert [e.id for e in unit.episodes.find(status=EpisodeStatus.FAILED)] == [failed]
        assert [e.id for e in unit.episodes.find(entity="G101")] == [done]
        assert unit.episodes.find(needs_review=True) == []
        assert unit.episodes.mark_reviewed(done).needs_review is False
