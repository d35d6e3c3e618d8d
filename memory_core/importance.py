"""Importance at write time: how much a memory is worth keeping before anyone used it.

An estimator is a typed callable ``(text, metadata) -> float in [0, 1]``; the default
scores information density with cues the seeds name (new facts, instructions,
preferences, decisions, numbers and names) and sets the memory's base weight.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from memory_core.index.lexical import STOPWORDS

ImportanceEstimator = Callable[[str, Mapping[str, Any]], float]

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d[\d,.:/%-]*")
_CUES = re.compile(
    r"\b(prefer|prefers|preferred|always|never|must|need|needs|want|wants|like|likes|love|loves|"
    r"hate|hates|allergic|budget|deadline|remember|important|don't|do not|avoid|instead|"
    r"decided|decision|password|address|birthday|name is|called|error|failed|bug|fix|"
    r"switched|moved|changed|policy|require|required|only|favorite|favourite)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(ok(ay)?|thanks?( you)?|lol|haha|sure|cool|nice|great|yes|no|yep|nope|hmm+|hi|hello|hey|bye)[.!?]*$",
    re.IGNORECASE,
)
_TYPE_BONUS = {
    "preference": 0.25,
    "instruction": 0.25,
    "decision": 0.2,
    "fact": 0.15,
    "error": 0.15,
}


def information_density(text: str, metadata: Mapping[str, Any]) -> float:
    """Heuristic importance in [0, 1]; ``metadata["importance"]`` overrides it."""
    override = metadata.get("importance")
    if isinstance(override, (int, float)) and not isinstance(override, bool):
        return min(max(float(override), 0.0), 1.0)
    stripped = text.strip()
    if _FILLER.match(stripped):
        return 0.05
    words = _WORD.findall(stripped)
    if not words:
        return 0.1
    content = [w for w in words if w.lower() not in STOPWORDS]
    score = 0.2 + 0.3 * len({w.lower() for w in content}) / len(words)
    score += min(0.2, 0.04 * len(content))
    if any(w[0].isdigit() for w in words):
        score += 0.1
    if any(w[0].isupper() for w in words[1:]):
        score += 0.05
    if _CUES.search(stripped):
        score += 0.2
    score += _TYPE_BONUS.get(str(metadata.get("type", "")).lower(), 0.0)
    return min(max(score, 0.0), 1.0)


def constant(text: str, metadata: Mapping[str, Any]) -> float:
    """Every memory equally important (for baselines and ablations)."""
    return 0.5


IMPORTANCE_ESTIMATORS: dict[str, ImportanceEstimator] = {
    "density": information_density,
    "constant": constant,
}
