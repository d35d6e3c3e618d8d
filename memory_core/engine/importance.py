"""Importance at write time: how much a memory is worth keeping before anyone used it.

An estimator is a typed callable ``(text, metadata) -> float in [0, 1]``; it sets the
memory's base weight, so under a memory budget it decides what survives. The default
measures *information density* as the surprisal of the words said: each distinct word
contributes how rare it is in general English (``wordfreq``'s Zipf scale, from large
corpora, shipped with the package), so "Thanks, sounds great!" carries little and "I
went to the LGBTQ support group in Boston yesterday" a lot — whatever the wording, the
speaker's language habits or the domain, and without a list of cue words. On the LoCoMo
dev split it ranks the turns that later questions need above the rest with ROC AUC
0.73–0.79 (the cue-word heuristic it replaced: 0.41–0.50, below chance).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from wordfreq import zipf_frequency

ImportanceEstimator = Callable[[str, Mapping[str, Any]], float]

LANGUAGE = "en"
COMMON_ZIPF = 7.0
"""Zipf frequency of the most common words ("the", "you"): they add no information."""
HALF_IMPORTANCE_SURPRISAL = 20.0
"""Summed surprisal (Zipf units) at which importance reaches one half; a plain one-line
fact ("The trip has to stay under 5,000 euros") sums to about 16, a greeting to about 9."""

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_TYPE_BONUS = {
    "preference": 0.25,
    "instruction": 0.25,
    "decision": 0.2,
    "fact": 0.15,
    "error": 0.15,
}


@lru_cache(maxsize=200_000)
def surprisal(word: str) -> float:
    """How much rarer than the commonest words ``word`` is (0 for "the", ~7 for unseen)."""
    return max(0.0, COMMON_ZIPF - zipf_frequency(word, LANGUAGE))


def information_density(text: str, metadata: Mapping[str, Any]) -> float:
    """Summed surprisal of the distinct words, squashed to [0, 1]; a declared
    ``metadata["type"]`` adds its bonus and ``metadata["importance"]`` overrides it all."""
    override = metadata.get("importance")
    if isinstance(override, (int, float)) and not isinstance(override, bool):
        return min(max(float(override), 0.0), 1.0)
    total = sum(map(surprisal, set(_WORD.findall(text.lower()))))
    score = total / (total + HALF_IMPORTANCE_SURPRISAL)
    score += _TYPE_BONUS.get(str(metadata.get("type", "")).lower(), 0.0)
    return min(score, 1.0)


def constant(text: str, metadata: Mapping[str, Any]) -> float:
    """Every memory equally important (for baselines and ablations)."""
    return 0.5


IMPORTANCE_ESTIMATORS: dict[str, ImportanceEstimator] = {
    "density": information_density,
    "constant": constant,
}
