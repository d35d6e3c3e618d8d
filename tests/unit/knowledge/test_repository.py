from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_core.engine.clock import ManualClock
from memory_core.errors import InputError, NotFoundError
from memory_core.knowledge import ItemStatus, KnowledgeBase, ReviewAction

from .conftest import record


def _submit(kb: KnowledgeBase, **overrides: object) -> str:
    with kb.unit() as unit:
        submission = unit.items.submit(record(**overrides), actor="sync")
    assert submission.item is not None, submission.result.problems
    return submission.item.id


def _approve(kb: KnowledgeBase, item_id: str, reviewer: str = "alice") -> None:
    with kb.unit() as unit:
        unit.items.approve(item_id, reviewer=reviewer)


def test_submit_stores_pending_version_with_embedding_and_audit(kb: KnowledgeBase) -> None:
    item_id = _submit(kb)
    with kb.unit() as unit:
        item = unit.items.get(item_id)
        row = unit.items.row(item_id)
        log = unit.items.audit_log(item_id)
    assert item.status is ItemStatus.PENDING_REVIEW
    assert item.checklist.verifiable is True
    assert row.embedding is not None and row.embedding_model == "hashing-64"
    vector = np.frombuffer(row.embedding, dtype=np.float32)
    assert vector.shape == (64,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5
    assert [e.action for e in log] == [ReviewAction.SUBMIT]
    assert log[0].actor == "sync" and "+version: 3.1" in (log[0].note or "")


def test_refused_submission_writes_nothing(kb: KnowledgeBase) -> None:
    with kb.unit() as unit:
        submission = unit.items.submit(record(confidence=7))
        assert not submission.accepted and submission.result.problems
        assert unit.items.items() == []
        assert unit.items.audit_log() == []


def test_trusted_source_is_active_at_once(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb(trusted_sources=frozenset({"HR_API"}))
    item_id = _submit(kb)
    with kb.unit() as unit:
        item = unit.items.get(item_id)
        actions = [e.action for e in unit.items.audit_log(item_id)]
    assert item.status is ItemStatus.ACTIVE and item.last_verified_at is not None
    assert actions == [ReviewAction.SUBMIT, ReviewAction.AUTO_APPROVE]


def test_version_must_increase_against_any_stored_version(kb: KnowledgeBase) -> None:
    _submit(kb, version="3.2")
    with kb.unit() as unit:
        result = unit.items.submit(record(version="3.1")).result
    assert [p.field for p in result.problems] == ["version"]
    assert "3.2" in result.problems[0].message


def test_approval_supersedes_previous_version(kb: KnowledgeBase) -> None:
    v1 = _submit(kb, version="1.0")
    expiring = _submit(kb, key="policy.travel", version="1.0", expires_at="2025-03-01")
    _approve(kb, v1)
    v2 = _submit(kb, version="2.0", content="Employees get 6 days.")
    _approve(kb, v2, reviewer="bob")
    with kb.unit() as unit:
        old, new = unit.items.get(v1), unit.items.get(v2)
        log = unit.items.audit_log(key="policy.leave")
        travel = unit.items.get(expiring)
    assert old.status is ItemStatus.DEPRECATED and old.review_note == "superseded by v2.0"
    assert new.status is ItemStatus.ACTIVE and new.reviewer == "bob"
    assert [e.action for e in log] == [
        ReviewAction.SUBMIT,
        ReviewAction.APPROVE,
        ReviewAction.SUBMIT,
        ReviewAction.SUPERSEDE,
        ReviewAction.APPROVE,
    ]
    assert log[3].before is not None and log[3].before["status"] == "active"
    assert log[3].after is not None and log[3].after["status"] == "deprecated"
    assert travel.status is ItemStatus.PENDING_REVIEW


def test_superseded_version_whose_window_ended_becomes_expired(kb: KnowledgeBase) -> None:
    v1 = _submit(kb, version="1", expires_at="2025-01-01")
    _approve(kb, v1)
    _approve(kb, _submit(kb, version="2", effective_from="2025-01-01"))
    with kb.unit() as unit:
        assert unit.items.get(v1).status is ItemStatus.EXPIRED


def test_future_dated_approval_keeps_old_text_in_force_until_then(kb: KnowledgeBase) -> None:
    v1 = _submit(kb, version="1")
    _approve(kb, v1)
    handover = "2025-09-01"
    v2 = _submit(kb, version="2", effective_from=handover)
    _approve(kb, v2)
    with kb.unit() as unit:
        old = unit.items.get(v1)
    assert old.status is ItemStatus.ACTIVE
    assert old.expires_at == datetime(2025, 9, 1, tzinfo=UTC)


@pytest.mark.parametrize("reviewer", ["", "   ", None])
def test_review_actions_require_a_reviewer(kb: KnowledgeBase, reviewer: str | None) -> None:
    item_id = _submit(kb)
    with kb.unit() as unit:
        for action in (unit.items.approve, unit.items.reject, unit.items.expire):
            with pytest.raises(InputError) as info:
                action(item_id, reviewer=reviewer)  # type: ignore[arg-type, operator]
            assert info.value.field == "reviewer"
        assert unit.items.get(item_id).status is ItemStatus.PENDING_REVIEW


def test_reject_keeps_the_version_deprecated_with_the_reason(kb: KnowledgeBase) -> None:
    item_id = _submit(kb)
    with kb.unit() as unit:
        item = unit.items.reject(item_id, reviewer="carol", note="no source document")
        with pytest.raises(InputError, match="only pending_review"):
            unit.items.approve(item_id, reviewer="carol")
    assert item.status is ItemStatus.DEPRECATED
    assert item.review_note == "rejected: no source document" and item.reviewer == "carol"


def test_edit_reruns_the_gate_and_reembeds(kb: KnowledgeBase) -> None:
    item_id = _submit(kb)
    with kb.unit() as unit:
        before = bytes(unit.items.row(item_id).embedding or b"")
        item = unit.items.edit(
            item_id,
            reviewer="dave",
            changes={
                "content": "Five days of annual leave after one year.",
                "expires_at": "2030-01-01",
            },
        )
        after = bytes(unit.items.row(item_id).embedding or b"")
        log = unit.items.audit_log(item_id)
    assert item.content == "Five days of annual leave after one year."
    assert item.expires_at == datetime(2030, 1, 1, tzinfo=UTC)
    assert before != after
    assert log[-1].action is ReviewAction.EDIT and log[-1].actor == "dave"
    assert log[-1].before is not None and log[-1].before["expires_at"] is None


def test_bad_edit_changes_nothing(kb: KnowledgeBase) -> None:
    item_id = _submit(kb)
    with kb.unit() as unit:
        with pytest.raises(InputError, match="expires_at"):
            unit.items.edit(item_id, reviewer="dave", changes={"expires_at": "2020-01-01"})
        with pytest.raises(InputError, match="editable fields"):
            unit.items.edit(item_id, reviewer="dave", changes={"version": "9"})
        assert unit.items.get(item_id).expires_at is None
        assert len(unit.items.audit_log(item_id)) == 1


def test_active_versions_are_not_edited_in_place(kb: KnowledgeBase) -> None:
    item_id = _submit(kb)
    _approve(kb, item_id)
    with kb.unit() as unit, pytest.raises(InputError, match="submit a new version"):
        unit.items.edit(item_id, reviewer="dave", changes={"content": "x"})


def test_expire_now_and_sweep_due(kb: KnowledgeBase, clock: ManualClock) -> None:
    manual = _submit(kb, version="1", key="a")
    due = _submit(kb, version="1", key="b", expires_at="2025-07-01")
    for item_id in (manual, due):
        _approve(kb, item_id)
    with kb.unit() as unit:
        expired = unit.items.expire(manual, reviewer="erin", note="withdrawn")
        assert unit.items.expire_due() == []
        with pytest.raises(InputError, match="already expired"):
            unit.items.expire(manual, reviewer="erin")
    assert expired.status is ItemStatus.EXPIRED
    assert expired.expires_at == datetime(2025, 6, 1, tzinfo=UTC)
    clock.advance(timedelta(days=31).total_seconds())
    with kb.unit() as unit:
        swept = unit.items.expire_due()
        assert [i.id for i in swept] == [due]
        assert unit.items.audit_log(due)[-1].actor == "system"


def test_failed_unit_rolls_everything_back(kb: KnowledgeBase) -> None:
    with pytest.raises(RuntimeError), kb.unit() as unit:
        unit.items.submit(record())
        raise RuntimeError("boom")
    with kb.unit() as unit:
        assert unit.items.items() == []


def test_unknown_ids_raise_not_found(kb: KnowledgeBase) -> None:
    with kb.unit() as unit, pytest.raises(NotFoundError, match="knowledge item 'nope'"):
        unit.items.approve("nope", reviewer="x")


def test_versions_are_ordered_numerically(kb: KnowledgeBase) -> None:
    for version in ("1.9", "1.10", "2"):
        _submit(kb, version=version)
    with kb.unit() as unit:
        assert [v.version for v in unit.items.versions("policy.leave")] == ["1.9", "1.10", "2"]
        newest = unit.items.newest("policy.leave")
        assert newest is not None and newest.version == "2"
