from datetime import UTC, datetime
from typing import Any

import pytest

from memory_core.errors import InputError
from memory_core.knowledge import IngestionGate, ItemStatus, KnowledgeSettings, SourceKind
from memory_core.knowledge.gate import complete_checklist, parse_when, version_diff

from .conftest import record


def _gate(**settings: Any) -> IngestionGate:
    return IngestionGate(settings=KnowledgeSettings(**settings))


def test_parse_builds_a_utc_draft() -> None:
    draft, problems = _gate().parse(record(expires_at="2026-01-01T08:00:00+08:00"))
    assert problems == [] and draft is not None
    assert draft.effective_from == datetime(2024, 1, 1, tzinfo=UTC)
    assert draft.expires_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert draft.source_kind is SourceKind.FIRST_PARTY_SYSTEM


def test_parse_lists_every_problem_with_its_field() -> None:
    raw = record(
        content="",
        source_kind="rumour",
        confidence=1.5,
        version="three",
        effective_from="2024-02-30",
        extra="x",
    )
    del raw["source_name"]
    draft, problems = _gate().parse(raw)
    assert draft is None
    fields = {p.field for p in problems}
    assert {
        "content",
        "source_kind",
        "confidence",
        "version",
        "effective_from",
        "source_name",
        "item",
    } <= fields
    assert any(p.field == "source_name" and p.message == "is required" for p in problems)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC)),
        ("2024-05-01 10:00", datetime(2024, 5, 1, 10, tzinfo=UTC)),
    ],
)
def test_parse_when(value: str, expected: datetime) -> None:
    assert parse_when(value, "f") == expected


def test_parse_when_refuses_naive_datetimes_and_garbage() -> None:
    with pytest.raises(InputError, match="timezone-aware"):
        parse_when(datetime(2024, 1, 1), "effective_from")
    with pytest.raises(InputError, match="effective_from"):
        parse_when(20240101, "effective_from")


def test_untrusted_source_goes_to_review_trusted_is_active() -> None:
    draft, _ = _gate().parse(record())
    assert draft is not None
    assert _gate().evaluate(draft, None).status is ItemStatus.PENDING_REVIEW
    trusted = _gate(trusted_sources=frozenset({"HR_API"})).evaluate(draft, None)
    assert trusted.accepted and trusted.status is ItemStatus.ACTIVE


def test_a_no_to_any_of_the_three_questions_refuses_even_trusted() -> None:
    draft, _ = _gate().parse(record(checklist={"used_often": False}))
    assert draft is not None
    result = _gate(trusted_sources=frozenset({"HR_API"})).evaluate(draft, None)
    assert not result.accepted and result.status is None
    assert [p.field for p in result.problems] == ["checklist.used_often"]


def test_checklist_is_completed_where_the_gate_knows_the_answer() -> None:
    draft, _ = _gate().parse(record(expires_at="2030-01-01"))
    assert draft is not None
    checklist = complete_checklist(draft)
    assert (checklist.verifiable, checklist.used_often, checklist.clear_validity) == (
        True,
        None,
        True,
    )
    learned, _ = _gate().parse(record(source_kind="learned_from_episode"))
    assert learned is not None and complete_checklist(learned).verifiable is None
    result = _gate().evaluate(draft, None)
    assert result.draft is not None and result.draft.checklist == checklist


def test_diff_shows_changed_lines_only_as_changes() -> None:
    old, _ = _gate().parse(record())
    new, _ = _gate().parse(
        record(
            version="3.2",
            content=(
                "Employees with one full year of service get 5 days of annual leave.\n"
                "Ten years of service add 2 days."
            ),
        )
    )
    assert old is not None and new is not None
    diff = version_diff(old, new)
    assert diff.startswith("--- policy.leave v3.1\n+++ policy.leave v3.2")
    assert "-version: 3.1" in diff and "+version: 3.2" in diff
    assert "+Ten years of service add 2 days." in diff
    assert "-Employees with one full year" not in diff
    assert version_diff(None, new).startswith("--- (none)")


def test_rule_problems_and_checklist_refusals_are_reported_together() -> None:
    draft, _ = _gate().parse(record(checklist={"verifiable": False}, confidence=1.0))
    assert draft is not None
    from dataclasses import replace

    result = _gate().evaluate(replace(draft, content=" "), None)
    assert {p.field for p in result.problems} == {"content", "checklist.verifiable"}
    assert result.diff == ""
