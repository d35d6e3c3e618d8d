from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.errors import ConfigError
from memory_core.knowledge.items import ItemDraft, KnowledgeItem, SourceKind
from memory_core.knowledge.rules import (
    RuleRegistry,
    confidence_in_range,
    effective_before_expiry,
    non_empty_content,
    version_increases,
)

from .conftest import stored_item

T0 = datetime(2024, 1, 1, tzinfo=UTC)
DRAFT = ItemDraft(
    key="policy.leave",
    content="5 days",
    source_kind=SourceKind.FIRST_PARTY_SYSTEM,
    source_name="HR_API",
    version="3.1",
    effective_from=T0,
)


def _previous(version: str) -> KnowledgeItem:
    return stored_item(
        version=version,
        source_kind=DRAFT.source_kind,
        effective_from=T0,
        created_at=T0,
        updated_at=T0,
    )


def test_valid_draft_passes_every_default_rule() -> None:
    assert RuleRegistry().check(DRAFT, _previous("3.0")) == []


def test_blank_fields_are_named() -> None:
    draft = replace(DRAFT, content="  ", source_name="")
    assert {f for f, _ in non_empty_content(draft, None)} == {"content", "source_name"}


@pytest.mark.parametrize("bad", [-0.01, 1.01, float("nan")])
def test_confidence_outside_unit_interval(bad: float) -> None:
    assert confidence_in_range(replace(DRAFT, confidence=bad), None)[0][0] == "confidence"


def test_expiry_must_follow_effective_date() -> None:
    assert effective_before_expiry(replace(DRAFT, expires_at=T0), None)[0][0] == "expires_at"
    later = datetime(2024, 1, 2, tzinfo=UTC)
    assert effective_before_expiry(replace(DRAFT, expires_at=later), None) == []


@pytest.mark.parametrize(
    ("old", "ok"),
    [("3.0", True), ("3.1", False), ("3.1.0", False), ("3.10", False), ("2.9.9", True)],
)
def test_version_must_increase(old: str, ok: bool) -> None:
    assert (version_increases(DRAFT, _previous(old)) == []) is ok


def test_registry_collects_every_problem_and_custom_rules() -> None:
    registry = RuleRegistry()
    registry.register(
        "leave_days_limit",
        lambda d, p: (
            [("data.days", "exceeds tenure * 5")]
            if (d.data or {}).get("days", 0) > 5 * (d.data or {}).get("tenure", 0)
            else []
        ),
    )
    draft = replace(DRAFT, content="", confidence=2.0, data={"days": 20, "tenure": 1})
    fields = [f for f, _ in registry.check(draft, _previous("3.1"))]
    assert fields == ["content", "confidence", "version", "data.days"]
    assert "leave_days_limit" in registry.names()
    assert [f for f, _ in registry.check(draft, None, skip=("leave_days_limit",))] == [
        "content",
        "confidence",
    ]


def test_registry_refuses_duplicates_and_non_callables() -> None:
    registry = RuleRegistry()
    with pytest.raises(ConfigError, match="already registered"):
        registry.register("version_increases", version_increases)
    with pytest.raises(ConfigError):
        registry.register("x", "not a function")  # type: ignore[arg-type]


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_confidence_rule_accepts_exactly_the_unit_interval(value: float) -> None:
    ok = confidence_in_range(replace(DRAFT, confidence=value), None) == []
    assert ok == (0.0 <= value <= 1.0)
