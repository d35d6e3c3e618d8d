"""Domain types of the long-term tier: drafts going in, item snapshots coming out.

Snapshots are frozen: the database row is the live state, a snapshot is what a caller
saw at one moment (like ``MemoryNode`` in the atlas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory_core.errors import InputError


class SourceKind(StrEnum):
    """Where a piece of knowledge comes from (the seed's two tracks plus learned experience)."""

    FIRST_PARTY_SYSTEM = "first_party_system"
    SECOND_PARTY_DOCUMENT = "second_party_document"
    LEARNED_FROM_EPISODE = "learned_from_episode"


class ItemStatus(StrEnum):
    """Only ``active`` items inside their validity window are ever retrieved."""

    PENDING_REVIEW = "pending_review"
    ACTIVE = "active"
    DEPRECATED = "deprecated"
    EXPIRED = "expired"


class ReviewAction(StrEnum):
    """Every change of an item leaves one audit entry with one of these actions."""

    SUBMIT = "submit"
    AUTO_APPROVE = "auto_approve"
    APPROVE = "approve"
    REJECT = "reject"
    EDIT = "edit"
    EXPIRE = "expire"
    SUPERSEDE = "supersede"
    FEEDBACK_DEMOTE = "feedback_demote"


class CitedBy(StrEnum):
    """What kind of thing cited a knowledge item."""

    MEMORY = "memory"
    EPISODE = "episode"


_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)$")


def parse_version(text: str) -> tuple[int, ...]:
    """``"3.1.2"`` or ``"v3.1"`` -> comparable tuple; anything else is refused."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise InputError(
            "version", f"must be dotted numbers like 3.1.2 (optional leading v), got {text!r}"
        )
    parts = tuple(int(p) for p in match.group(1).split("."))
    while len(parts) > 1 and parts[-1] == 0:  # 3.1 == 3.1.0
        parts = parts[:-1]
    return parts


@dataclass(frozen=True, slots=True)
class Checklist:
    """The seed's three admission questions; ``None`` means nobody has answered yet."""

    verifiable: bool | None = None
    used_often: bool | None = None
    clear_validity: bool | None = None

    def as_dict(self) -> dict[str, bool | None]:
        return {
            "verifiable": self.verifiable,
            "used_often": self.used_often,
            "clear_validity": self.clear_validity,
        }

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> Checklist:
        values = values or {}
        return cls(
            verifiable=values.get("verifiable"),
            used_often=values.get("used_often"),
            clear_validity=values.get("clear_validity"),
        )

    def refused(self) -> list[str]:
        """Questions explicitly answered "no": the seed refuses such items outright."""
        return [name for name, answer in self.as_dict().items() if answer is False]


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemDraft:
    """A proposed version of a knowledge item, before the ingestion gate."""

    key: str
    content: str
    source_kind: SourceKind
    source_name: str
    version: str
    effective_from: datetime
    expires_at: datetime | None = None
    confidence: float = 1.0
    checklist: Checklist = field(default_factory=Checklist)
    data: dict[str, Any] | None = None
    session_id: str | None = None
    user_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeItem:
    """One stored version of a knowledge item."""

    id: str
    key: str
    version: str
    content: str
    source_kind: SourceKind
    source_name: str
    effective_from: datetime
    expires_at: datetime | None
    confidence: float
    status: ItemStatus
    checklist: Checklist
    data: dict[str, Any] | None
    last_verified_at: datetime | None
    citation_count: int
    feedback_correct: int
    feedback_wrong: int
    consecutive_wrong: int
    reviewer: str | None
    review_note: str | None
    created_at: datetime
    updated_at: datetime
    session_id: str | None
    user_id: str | None

    @property
    def label(self) -> str:
        """``"HR_API v3.1"``: how explanations and diffs name a version."""
        return f"{self.source_name} v{self.version}"

    def valid_at(self, when: datetime) -> bool:
        """Inside the validity window ``effective_from <= when < expires_at``."""
        return self.effective_from <= when and (self.expires_at is None or when < self.expires_at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A memory or episode that relied on one item version."""

    id: str
    item_id: str
    item_key: str
    item_version: str
    cited_by_id: str
    cited_by_kind: CitedBy
    at: datetime
    session_id: str | None
    user_id: str | None
    needs_review: bool
    flag_reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """Who did what to an item, with the state before and after."""

    id: int
    item_id: str
    item_key: str
    action: ReviewAction
    actor: str
    at: datetime
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    note: str | None
