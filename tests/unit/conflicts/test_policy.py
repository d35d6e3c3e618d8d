"""ResolutionPolicy: newer vs more credible, review in between; forget requests."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory_core.conflicts import Verdict
from memory_core.conflicts.detector import Conflict
from memory_core.conflicts.items import ReviewAction
from memory_core.conflicts.policy import Resolution, ResolutionPolicy, parse_forget
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus
from memory_core.errors import ConfigError


def node(confidence: float = 1.0, pinned: bool = False) -> MemoryNode:
    return MemoryNode(
        id="m1",
        content="The budget is 5000.",
        session_id="s1",
        kind=MemoryKind.SESSION,
        status=MemoryStatus.ACTIVE,
        weight=1.0,
        strength=1.0,
        importance=0.5,
        confidence=confidence,
        created_at=0.0,
        last_accessed_at=0.0,
        access_count=0,
        expires_at=None,
        pinned=pinned,
        provenance=(),
        metadata={},
    )


def conflict(score: float = 0.9, confidence: float = 1.0, pinned: bool = False) -> Conflict:
    verdict = Verdict("contradiction", score, "budget changed", "value_change")
    return Conflict(node(confidence, pinned), 0.8, verdict)


POLICY = ResolutionPolicy()


def test_newer_confident_statement_supersedes() -> None:
    assert POLICY.decide(conflict(), 1.0) is Resolution.SUPERSEDE
    assert POLICY.decide(conflict(confidence=0.9), 0.8) is Resolution.SUPERSEDE


def test_more_credible_old_memory_wins() -> None:
    assert POLICY.decide(conflict(confidence=1.0), 0.5) is Resolution.KEEP_OLD
    assert POLICY.decide(conflict(confidence=0.9), 0.7) is Resolution.KEEP_OLD  # margin 0.2


@pytest.mark.parametrize(
    ("c", "new_confidence"),
    [
        (conflict(score=0.6), 1.0),  # the judge is unsure
        (conflict(pinned=True), 1.0),  # a confirmed memory is never overturned alone
        (conflict(confidence=0.5), 0.55),  # the new statement is hesitant
    ],
)
def test_in_between_goes_to_review(c: Conflict, new_confidence: float) -> None:
    assert POLICY.decide(c, new_confidence) is Resolution.REVIEW


def test_pinned_protection_can_be_switched_off() -> None:
    policy = replace(POLICY, protect_pinned=False)
    assert policy.decide(conflict(pinned=True), 1.0) is Resolution.SUPERSEDE


def test_loosely_related_pairs_go_to_review_under_auto_similarity() -> None:
    policy = replace(POLICY, auto_similarity=0.9)
    assert policy.decide(conflict(), 1.0) is Resolution.REVIEW  # the pair's cosine is 0.8
    assert replace(POLICY, auto_similarity=0.8).decide(conflict(), 1.0) is Resolution.SUPERSEDE


def test_a_sure_verdict_waives_the_similarity_gate() -> None:
    policy = replace(POLICY, auto_similarity=0.9, sure_score=0.95)
    assert policy.decide(conflict(score=0.95), 1.0) is Resolution.SUPERSEDE
    assert policy.decide(conflict(score=0.94), 1.0) is Resolution.REVIEW
    # by default only a certain verdict does
    gated = replace(POLICY, auto_similarity=0.9)
    assert gated.decide(conflict(score=0.99), 1.0) is Resolution.REVIEW
    assert gated.decide(conflict(score=1.0), 1.0) is Resolution.SUPERSEDE


def test_stored_confidence_follows_the_seed() -> None:
    assert POLICY.stored_confidence([Resolution.SUPERSEDE], 0.7) == 0.9
    assert POLICY.stored_confidence([Resolution.SUPERSEDE], 1.0) == 1.0
    assert POLICY.stored_confidence([Resolution.KEEP_OLD], 0.5) == 0.3
    assert POLICY.stored_confidence([Resolution.SUPERSEDE, Resolution.KEEP_OLD], 1.0) == 0.3
    assert POLICY.stored_confidence([Resolution.REVIEW], 0.65) == 0.65
    assert POLICY.stored_confidence([], 0.42) == 0.42


def test_suggestion_prefers_the_newer_unless_less_credible() -> None:
    assert POLICY.suggest(conflict(confidence=0.8), 0.9) is ReviewAction.ACCEPT_NEW
    assert POLICY.suggest(conflict(confidence=0.9), 0.6) is ReviewAction.KEEP_OLD


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("auto_score", 1.5),
        ("auto_similarity", 1.2),
        ("sure_score", -0.5),
        ("min_new_confidence", -0.1),
        ("winner_confidence", "high"),
        ("loser_confidence", 0.95),
        ("old_status", MemoryStatus.TOMBSTONED),
    ],
)
def test_bad_policy_values_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        ResolutionPolicy(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["Forget that.", "please forget it", "Actually, scratch that!", "ignore what I just said"],
)
def test_forget_the_last_statement(text: str) -> None:
    request = parse_forget(text)
    assert request is not None and request.topic is None


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Forget what I said about my address.", "my address"),
        ("Please forget about the Lisbon trip", "the Lisbon trip"),
        ("Can you forget everything I told you about Sam?", "Sam"),
        ("forget my card number, please", "my card number"),
    ],
)
def test_forget_a_topic(text: str, topic: str) -> None:
    request = parse_forget(text)
    assert request is not None and request.topic == topic


@pytest.mark.parametrize(
    "text",
    [
        "I keep forgetting to drink water.",
        "I forget every year, remind me.",
        "File it and forget it for tonight.",
        "Don't forget the milk.",
        "Forgetting names is my worst habit.",
    ],
)
def test_statements_about_forgetting_are_not_requests(text: str) -> None:
    assert parse_forget(text) is None
