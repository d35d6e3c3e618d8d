"""How a contradiction judge is chosen by name.

A judge looks at two memory texts and says whether they contradict each other, are
compatible statements about the same topic, or are unrelated (``verdict.py`` defines the
protocol and the answer). Implementations live in their own modules (``claim_judge.py``,
``llm_judge.py``); the detector and the CLI pick one through :data:`JUDGES`. The judges of
:data:`READ_BY_SENTENCE` come wrapped to read a long text sentence by sentence as well as
whole (``long_texts.py``, option ``by_sentence``); the default judge does unless told not
to, since its sentence pairs pass the gates whole pairs pass (docs/conflicts.md, seventh
pass).
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
BY_SENTENCE_BY_DEFAULT = frozenset({"claims"})
"""Judges of :data:`READ_BY_SENTENCE` that read by sentence unless told not to: the claim
judge, whose sentence pairs get its second look (seventh pass); ``nli``, which has none,
reads by sentence when asked (more recall, more false alarms: "Long texts read by
sentence")."""


def make_judge(
    name: str = DEFAULT_JUDGE, *, by_sentence: bool | None = None, **options: Any
) -> ContradictionJudge:
    """Build the judge registered as ``name`` with its keyword options; one of
    :data:`READ_BY_SENTENCE` reads long texts by sentence too when ``by_sentence`` is true
    (None: when it is one of :data:`BY_SENTENCE_BY_DEFAULT`) and it runs with its model
    (not ``slots=False``: sentence pairs are picked by one).

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
    if by_sentence is None:
        by_sentence = name in BY_SENTENCE_BY_DEFAULT
    if by_sentence and name in READ_BY_SENTENCE and options.get("slots", True):
        return read_by_sentence(judge, embedder=options.get("embedder"))
    return judge
