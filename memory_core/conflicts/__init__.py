"""Contradiction detection between memories: judges, their verdicts, and quality measurement.

``make_judge("claims")`` gives the offline default; ``make_judge("llm", base_url=...)`` an
OpenAI-compatible HTTP judge. :func:`evaluate` scores any judge on labelled pairs.
"""

from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.evaluation import (
    EvalReport,
    LabelledPair,
    Mistake,
    evaluate,
    load_pairs,
    parse_pairs,
)
from memory_core.conflicts.items import ReviewAction
from memory_core.conflicts.judge import DEFAULT_JUDGE, JUDGES, make_judge
from memory_core.conflicts.llm_judge import LLMJudge
from memory_core.conflicts.verdict import KINDS, ContradictionJudge, Span, Verdict

__all__ = [
    "DEFAULT_JUDGE",
    "JUDGES",
    "KINDS",
    "ClaimJudge",
    "ContradictionJudge",
    "EvalReport",
    "LLMJudge",
    "LabelledPair",
    "Mistake",
    "ReviewAction",
    "Span",
    "Verdict",
    "evaluate",
    "load_pairs",
    "make_judge",
    "parse_pairs",
]
