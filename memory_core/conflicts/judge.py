"""What a contradiction judge is, what it answers, and how one is chosen by name.

A judge looks at two memory texts and says whether they contradict each other, are
compatible statements about the same topic, or are unrelated. Implementations live in
their own modules (``claim_judge.py``, ``llm_judge.py``); the detector and the CLI only see
this protocol and pick an implementation through :data:`JUDGES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from memory_core.errors import ConfigError, InputError

Label = Literal["contradiction", "compatible", "unrelated"]
Kind = Literal["negation", "value_change", "antonym", "correction", "none"]
Side = Literal["a", "b"]

LABELS: tuple[Label, ...] = get_args(Label)
KINDS: tuple[Kind, ...] = get_args(Kind)


@dataclass(frozen=True, slots=True)
class Span:
    """A character range of one side of the pair, highlighted in the review UI."""

    side: Side
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's answer for one pair.

    Attributes:
        label: contradiction, compatible (same topic, consistent) or unrelated.
        score: confidence in [0, 1] that the pair is a contradiction, whatever the label.
        reason: one human-readable sentence explaining the label.
        kind: which family of evidence decided a contradiction; ``"none"`` otherwise.
        spans: the parts of ``a`` and ``b`` that differ, for highlighting.
    """

    label: Label
    score: float
    reason: str
    kind: Kind = "none"
    spans: tuple[Span, ...] = ()

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise InputError("label", f"{self.label!r} is not one of {', '.join(LABELS)}")
        if not 0.0 <= self.score <= 1.0:
            raise InputError("score", f"{self.score!r} is outside [0, 1]")
        if self.kind not in KINDS:
            raise InputError("kind", f"{self.kind!r} is not one of {', '.join(KINDS)}")

    @property
    def is_contradiction(self) -> bool:
        return self.label == "contradiction"


@runtime_checkable
class ContradictionJudge(Protocol):
    """Decides how two memory texts relate.

    ``similarity`` is an optional precomputed cosine similarity of the two texts'
    embeddings; judges may use it as extra topical evidence or ignore it.
    """

    @property
    def name(self) -> str: ...

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict: ...


def _claim_judge(**options: Any) -> ContradictionJudge:
    # Imported on use: the implementations import Verdict from this module.
    from memory_core.conflicts.claim_judge import ClaimJudge

    return ClaimJudge(**options)


def _llm_judge(**options: Any) -> ContradictionJudge:
    from memory_core.conflicts.llm_judge import LLMJudge

    return LLMJudge(**options)


JUDGES: dict[str, Callable[..., ContradictionJudge]] = {
    "claims": _claim_judge,
    "llm": _llm_judge,
}
"""Judge factories by name; ``make_judge(name, **options)`` calls one."""

DEFAULT_JUDGE = "claims"


def make_judge(name: str = DEFAULT_JUDGE, **options: Any) -> ContradictionJudge:
    """Build the judge registered as ``name`` with its keyword options.

    Raises:
        ConfigError: ``name`` is not registered, or the options do not fit the judge.
    """
    try:
        factory = JUDGES[name]
    except KeyError:
        raise ConfigError("judge", name, f"one of {', '.join(sorted(JUDGES))}") from None
    try:
        return factory(**options)
    except TypeError as exc:
        raise ConfigError("judge options", sorted(options), f"options of '{name}': {exc}") from exc
