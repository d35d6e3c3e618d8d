"""What to do about a contradiction: the seed's newer-vs-more-credible rule, made configurable.

For a new statement that contradicts a stored memory (the statement is always newer):

- the judge is sure, the old memory is not clearly more credible and the new statement
  is confident enough: the old one is superseded, the new one stored with at least
  ``winner_confidence`` (the seed's 0.9);
- the old memory is more credible by ``credibility_margin`` or more: the new one is
  stored with at most ``loser_confidence`` (the seed's 0.3);
- anything in between (an unsure judge, a pinned old memory, a hesitant new statement):
  queued for a human.

"Forget that" / "forget what I said about X" are requests, not statements: they
tombstone the memory they point at (see :func:`parse_forget`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from memory_core.conflicts.detector import Conflict
from memory_core.conflicts.items import ReviewAction
from memory_core.engine.model import MemoryStatus
from memory_core.errors import ConfigError


class Resolution(StrEnum):
    """What the guard did about one contradiction (or one forget request)."""

    SUPERSEDE = "supersede"
    KEEP_OLD = "keep_old"
    REVIEW = "review"
    FORGET = "forget"


_UNIT_FIELDS = (
    "auto_score",
    "auto_similarity",
    "sure_score",
    "min_new_confidence",
    "credibility_margin",
    "winner_confidence",
    "loser_confidence",
    "forget_min_similarity",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolutionPolicy:
    """Thresholds of automatic resolution; everything else goes to review.

    Attributes:
        auto_score: judge score at or above which a contradiction may be resolved alone.
        auto_similarity: cosine at or above which it may be; looser pairs go to review.
        sure_score: judge score at or above which ``auto_similarity`` is waived: an explicit
            rejection ("text me instead of emailing") is sure even between two long turns
            whose embeddings differ (1.0: only for a certain verdict).
        min_new_confidence: the new statement's confidence needed to supersede.
        credibility_margin: old confidence minus new confidence at which the old wins.
        winner_confidence: confidence floor of a statement that superseded another.
        loser_confidence: confidence cap of a statement a more credible memory beat.
        protect_pinned: pinned memories (user-confirmed) are never superseded alone.
        old_status: status given to a beaten old memory (superseded or deprecated).
        forget_min_similarity: cosine a memory needs to be the target of "forget X".
    """

    auto_score: float = 0.7
    auto_similarity: float = 0.0
    sure_score: float = 1.0
    min_new_confidence: float = 0.6
    credibility_margin: float = 0.2
    winner_confidence: float = 0.9
    loser_confidence: float = 0.3
    protect_pinned: bool = True
    old_status: MemoryStatus = MemoryStatus.SUPERSEDED
    forget_min_similarity: float = 0.35

    def __post_init__(self) -> None:
        for name in _UNIT_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(name, value, "a number in [0, 1]")
            if not 0.0 <= value <= 1.0:
                raise ConfigError(name, value, "a number in [0, 1]")
        if self.loser_confidence > self.winner_confidence:
            raise ConfigError(
                "loser_confidence",
                self.loser_confidence,
                f"at most winner_confidence ({self.winner_confidence})",
            )
        if self.old_status not in (MemoryStatus.SUPERSEDED, MemoryStatus.DEPRECATED):
            raise ConfigError("old_status", self.old_status, "superseded or deprecated")

    def decide(self, conflict: Conflict, new_confidence: float) -> Resolution:
        """The automatic resolution of one contradiction, or ``REVIEW``."""
        old = conflict.existing
        if old.confidence - new_confidence >= self.credibility_margin:
            return Resolution.KEEP_OLD
        if (
            conflict.verdict.score >= self.auto_score
            and (
                conflict.similarity >= self.auto_similarity
                or conflict.verdict.score >= self.sure_score
            )
            and new_confidence >= self.min_new_confidence
            and not (self.protect_pinned and old.pinned)
        ):
            return Resolution.SUPERSEDE
        return Resolution.REVIEW

    def suggest(self, conflict: Conflict, new_confidence: float) -> ReviewAction:
        """What a reviewer is offered first: the newer statement, unless it is less credible."""
        if conflict.existing.confidence > new_confidence:
            return ReviewAction.KEEP_OLD
        return ReviewAction.ACCEPT_NEW

    def stored_confidence(self, resolutions: list[Resolution], given: float) -> float:
        """Confidence the new statement is stored with, given what was decided for it."""
        if Resolution.KEEP_OLD in resolutions:
            return min(given, self.loser_confidence)
        if Resolution.SUPERSEDE in resolutions:
            return max(given, self.winner_confidence)
        return given


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    """A request to forget: ``topic`` None means the memory written last."""

    topic: str | None

    def describe(self) -> str:
        return "the last statement" if self.topic is None else f"what was said about {self.topic!r}"


_LEAD = r"^\s*(?:(?:ok(?:ay)?|hey|oh|and|also|actually)[,\s]+)*(?:please\s+|can you\s+|could you\s+|would you\s+)?"
_TAIL = r"\s*(?:,?\s*please)?\s*[.!?]*\s*$"
_LAST = re.compile(
    _LEAD
    + r"(?:forget|disregard|ignore|scratch)\s+(?:that|this|it|what i (?:just )?(?:said|told you))"
    + _TAIL,
    re.IGNORECASE,
)
_TOPIC = re.compile(
    _LEAD
    + r"(?:forget|disregard)\s+(?:(?:what|everything|anything) i (?:said|told you|mentioned)\s+)?"
    r"about\s+(?P<topic>.+?)" + _TAIL,
    re.IGNORECASE,
)
_OBJECT = re.compile(
    _LEAD + r"forget\s+(?P<topic>(?:my|the|our)\s+.+?)" + _TAIL,
    re.IGNORECASE,
)


def parse_forget(text: str) -> ForgetRequest | None:
    """Recognise an imperative request to forget; statements such as "I keep forgetting"
    or "forget it for tonight" about something else are not requests."""
    if _LAST.match(text):
        return ForgetRequest(None)
    for pattern in (_TOPIC, _OBJECT):
        match = pattern.match(text)
        if match:
            return ForgetRequest(match.group("topic").strip())
    return None
