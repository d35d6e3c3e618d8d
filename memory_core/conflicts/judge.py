"""How a contradiction judge is chosen by name.

A judge looks at two memory texts and says whether they contradict each other, are
compatible statements about the same topic, or are unrelated (``verdict.py`` defines the
protocol and the answer). Implementations live in their own modules (``claim_judge.py``,
``llm_judge.py``); the detector and the CLI pick one through :data:`JUDGES`. The judges of
:data:`READ_BY_SENTENCE` can come wrapped to read a long text sentence by sentence as well
as whole (``long_texts.py``, option ``by_sentence``): off by default, since on the
trip-approval scan it queued chatter (docs/conflicts.md, "Long texts read by sentence").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.llm_judge import LLMJudge
from memory_core.conflicts.long_texts import read_by_sentence
from memory_core.conflicts.nli_judge import NLIJudge
from memory_core.conflicts.verdict import ContradictionJudge
from memory_core.errors import ConfigError

JUDGES: dict[str, Callable[..., ContradictionJudge]] = {
    "claims": ClaimJudge,
    "llm": LLMJudge,
    "nli": NLIJudge,
}
"""Judge factories by name; ``make_judge(name, **options)`` calls one."""

DEFAULT_JUDGE = "claims"
READ_BY_SENTENCE = frozenset({"claims", "nli"})
"""Judges that read one statement well and a chatty turn badly (docs/conflicts.md); an
LLM reads a turn whole."""


def make_judge(
    name: str = DEFAULT_JUDGE, *, by_sentence: bool = False, **options: Any
) -> ContradictionJudge:
    """Build the judge registered as ``name`` with its keyword options; one of
    :data:`READ_BY_SENTENCE` reads long texts by sentence too when ``by_sentence`` is true
    and it runs with its model (not ``slots=False``: sentence pairs are picked by one).

    Raises:
        ConfigError: ``name`` is not registered, or the options do not fit the judge.
    """
    try:
        factory = JUDGES[name]
    except KeyError:
        raise ConfigError("judge", name, f"one of {', '.join(sorted(JUDGES))}") from None
    try:
        judge = factory(**options)
    except TypeError as exc:
        raise ConfigError("judge options", sorted(options), f"options of '{name}': {exc}") from exc
    if by_sentence and name in READ_BY_SENTENCE and options.get("slots", True):
        return read_by_sentence(judge, embedder=options.get("embedder"))
    return judge
