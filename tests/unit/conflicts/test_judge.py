"""Verdict validation, the judge registry and the package's public names."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

import memory_core.conflicts as conflicts
from memory_core.conflicts import JUDGES, ClaimJudge, ContradictionJudge, Span, Verdict, make_judge
from memory_core.conflicts.llm_judge import LLMJudge
from memory_core.conflicts.long_texts import SentenceJudge, TwoLookSentenceJudge
from memory_core.conflicts.nli_judge import NLIJudge
from memory_core.conflicts.verdict import BaseJudge
from memory_core.errors import ConfigError, InputError


def test_public_names_are_exactly_all() -> None:
    public = {
        name
        for name, value in vars(conflicts).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public == set(conflicts.__all__)


def test_verdict_is_frozen_and_slotted() -> None:
    verdict = Verdict("compatible", 0.1, "same topic")
    with pytest.raises(AttributeError):
        verdict.score = 0.5  # type: ignore[misc]
    assert not hasattr(verdict, "__dict__")
    assert verdict.kind == "none" and verdict.spans == ()
    assert not verdict.is_contradiction


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"label": "maybe"}, "label"),
        ({"score": 1.5}, "score"),
        ({"score": -0.01}, "score"),
        ({"kind": "sarcasm"}, "kind"),
    ],
)
def test_verdict_rejects_bad_fields(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"label": "contradiction", "score": 0.9, "reason": "r"} | kwargs
    with pytest.raises(InputError) as info:
        Verdict(**args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_span_carries_side_and_text() -> None:
    span = Span("b", 4, 8, "6000")
    assert (span.side, span.start, span.end, span.text) == ("b", 4, 8, "6000")


def test_make_judge_builds_registered_judges() -> None:
    judge = make_judge("claims", threshold=0.6, by_sentence=False)
    assert isinstance(judge, ClaimJudge)
    assert isinstance(judge, ContradictionJudge)
    assert judge.name == "claims"
    assert make_judge().name == "claims"
    assert set(JUDGES) == {"claims", "llm", "nli"}


HOOKS = ("second_looks", "reads_model", "read_ahead", "prime", "warm", "close")


@pytest.mark.parametrize(
    ("judge", "own"),
    [
        (ClaimJudge, {"second_looks", "reads_model", "read_ahead", "prime", "warm"}),
        (SentenceJudge, set(HOOKS)),
        (TwoLookSentenceJudge, set(HOOKS)),
        (LLMJudge, {"close"}),
        (NLIJudge, set()),
    ],
)
def test_judges_implement_their_hooks_and_inherit_the_no_ops(judge: type, own: set[str]) -> None:
    """A hook renamed on one side only would leave the judge the base's no-op, silently."""
    assert issubclass(judge, BaseJudge)
    assert {hook for hook in HOOKS if getattr(judge, hook) is not getattr(BaseJudge, hook)} == own


def test_the_base_hooks_do_nothing() -> None:
    base = BaseJudge()
    assert base.second_looks == 0 and not base.reads_model("a", "b", 0.9)
    base.read_ahead([("a", "b", 0.9)])
    base.prime("model", ["a"], np.zeros((1, 2), dtype=np.float32))
    base.warm(["a"])
    base.close()


def test_make_judge_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"'judge' = 'oracle'.*claims, llm, nli"):
        make_judge("oracle")


def test_make_judge_bad_options_name_the_judge() -> None:
    with pytest.raises(ConfigError, match="options of 'claims'"):
        make_judge("claims", colour="blue")
    with pytest.raises(ConfigError, match="base_url"):
        make_judge("llm")


def test_make_judge_passes_option_validation_errors_through() -> None:
    with pytest.raises(ConfigError, match="'threshold' = 0"):
        make_judge("claims", threshold=0)
