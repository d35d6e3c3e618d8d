"""What a contradiction judge is and what it answers: the protocol and its verdict.

Implementations (``claim_judge.py``, ``llm_judge.py``) and everything that reads verdicts
import this module; ``judge.py`` chooses an implementation by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

from memory_core.errors import InputError

if TYPE_CHECKING:
    import numpy as np

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
        untyped: a contradiction that names no typed value, slot, denial or correction: a
            learned model's with no rule's finding under it, or one word swapped in the
            same frame ("I passed my test" / "I failed my test"); what a scan queues with
            care (``review_filter``).
    """

    label: Label
    score: float
    reason: str
    kind: Kind = "none"
    spans: tuple[Span, ...] = ()
    untyped: bool = False

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

    Besides ``judge``, a judge declares the hooks its callers (the detector, the sentence
    reader, the CLI) call on every judge: what it does ahead of or after the pairs, and
    what it reports. They are declared, not looked up by name, so a renamed or misspelt
    hook fails the type check rather than silently turning off; a judge with nothing to
    do in one inherits :class:`BaseJudge`'s no-op.
    """

    @property
    def name(self) -> str: ...

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict: ...

    @property
    def second_looks(self) -> int:
        """Pairs the judge's second look has read so far (0 for a judge without one)."""
        ...

    def reads_model(self, a: str, b: str, similarity: float | None = None) -> bool:
        """Whether a first look at the pair may run a model: the guard's writes leave such
        a pair to their worker (``detector.py``)."""
        ...

    def read_ahead(self, pairs: Sequence[tuple[str, str, float]]) -> None:
        """Read in one batch what judging each ``(a, b, similarity)`` will read."""
        ...

    def prime(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Take embeddings (by ``model``) the caller already has of texts it will judge."""
        ...

    def warm(self, texts: Sequence[str] = ()) -> None:
        """Pay first-use costs now; ``texts`` are the stored memories it will be handed."""
        ...

    def close(self) -> None:
        """Release what the judge holds (an HTTP judge's connection)."""
        ...


class BaseJudge:
    """The hooks of :class:`ContradictionJudge` for a judge with nothing to do in them:
    no second look, no model read ahead, no vectors kept, nothing to warm or release.
    A judge overrides the ones it has."""

    __slots__ = ()

    @property
    def second_looks(self) -> int:
        return 0

    def reads_model(self, a: str, b: str, similarity: float | None = None) -> bool:
        return False

    def read_ahead(self, pairs: Sequence[tuple[str, str, float]]) -> None:
        return None

    def prime(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        return None

    def warm(self, texts: Sequence[str] = ()) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class FirstLook:
    """A judge's quick answer on a pair, and how a slower model would settle it.

    The write path acts on ``verdict`` at once when the look is settled; an open look is
    one the quick judge is unsure of, which the judge's ``second_look`` decides off the
    write path.

    Attributes:
        a: the older text, as judged.
        b: the newer text, as judged.
        verdict: the quick answer (the final one for a settled look; the fallback for an
            open look whose second look failed).
        open: whether the judge's second look decides the pair.
        state: what the judge that made the look needs for its second look (the claim
            judge: the verdict for a given cross-encoder probability; a judge wrapping
            others: their looks), read by that judge only.
    """

    a: str
    b: str
    verdict: Verdict
    open: bool = False
    state: Any = field(default=None, compare=False, repr=False)


@runtime_checkable
class TwoLookJudge(ContradictionJudge, Protocol):
    """A judge whose ``judge`` is a quick first look plus, on the pairs it leaves open, a
    slower second look that callers may run apart (batched, on another thread).

    ``judge(a, b)`` must equal ``second_look([first_look(a, b)])[0]``: what the judge
    says of a pair does not depend on when the second look ran. A judge wrapping others
    looks first through theirs, is open when one of theirs is, and gives theirs their
    second look in one batch.
    """

    def first_look(
        self,
        a: str,
        b: str,
        similarity: float | None = None,
        *,
        context: tuple[str, str] | None = None,
    ) -> FirstLook:
        """The quick look at ``a`` (older) and ``b`` (newer). ``context``: the older and
        newer texts ``a`` and ``b`` are sentences of, when a judge reading long texts by
        sentence asks (``long_texts.py``); a judge may have its second look read them too
        (a fragment lost what its turn said around it) or ignore them."""
        ...

    def second_look(self, looks: Sequence[FirstLook]) -> list[Verdict]: ...


def judged_now(judge: TwoLookJudge, a: str, b: str, similarity: float | None = None) -> Verdict:
    """A two-look judge's ``judge``: the first look and, when it leaves the pair open, the
    second look at once (the contract above, in one place)."""
    look = judge.first_look(a, b, similarity)
    return judge.second_look([look])[0] if look.open else look.verdict
