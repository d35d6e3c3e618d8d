"""What the knowledge audit page computes: tables, filters, review actions, uploads.

The page renders; these functions decide. Review actions are idempotent through the
audit trail: a request carries the id of the item's newest audit entry the reviewer
saw, so a double submit finds its own first effect and changes nothing, and a request
against an item someone else changed meanwhile is refused instead of overwriting.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memory_core.boundary import excerpt
from memory_core.dashboard.access import Action, Identity, require
from memory_core.dashboard.limits import note_text
from memory_core.dashboard.ui.identity import REVIEWER_KEY
from memory_core.embedding.base import Embedder
from memory_core.errors import InputError, UploadError
from memory_core.knowledge.audit import ItemDetail, VersionConflict
from memory_core.knowledge.importer import ImportReport, decode_records, import_records
from memory_core.knowledge.items import (
    AuditEntry,
    Citation,
    ItemStatus,
    KnowledgeItem,
    ReviewAction,
    SourceKind,
)
from memory_core.knowledge.repository import KnowledgeRepository
from memory_core.knowledge.sample import SampleReport, load_sample_knowledge
from memory_core.knowledge.service import KnowledgeBase
from memory_core.store.engine import Database, open_database

STATUS_ORDER = (
    ItemStatus.PENDING_REVIEW,
    ItemStatus.ACTIVE,
    ItemStatus.DEPRECATED,
    ItemStatus.EXPIRED,
)
IMPORT_TYPES = ("csv", "json")


class AuditKeys:
    """Session-state keys of the knowledge audit page (widgets write under these)."""

    REVIEWER = REVIEWER_KEY
    STATUSES = "knowledge_statuses"
    TEXT = "knowledge_text"
    STALE_DAYS = "knowledge_stale_days"
    LOW_CONFIDENCE = "knowledge_low_confidence"
    ITEM = "knowledge_item"
    NOTE = "knowledge_note"
    UPLOAD = "knowledge_upload"
    IMPORTED = "knowledge_imported"
    OUTCOME = "knowledge_outcome"


@dataclass(frozen=True, slots=True)
class KnowledgeDesk:
    """The knowledge base the page works on, and what opening it did."""

    kb: KnowledgeBase
    db: Database
    sample: SampleReport


def open_knowledge(embedder: Embedder, *, db: Database | None = None) -> KnowledgeDesk:
    """Open the app's database (``open_database()`` unless given) and load the sample.

    Loading is idempotent, so every start of the app can call this: the first one fills
    an empty database, later ones add nothing.
    """
    database = db if db is not None else open_database()
    kb = KnowledgeBase(database.session, embedder=embedder)
    return KnowledgeDesk(kb=kb, db=database, sample=load_sample_knowledge(kb))


@dataclass(frozen=True, slots=True)
class AuditOverview:
    """Everything above the item detail, read in one short transaction."""

    counts: dict[ItemStatus, int]
    items: list[KnowledgeItem]
    stale: list[KnowledgeItem]
    expired_cited: list[tuple[KnowledgeItem, int]]
    low_confidence: list[KnowledgeItem]
    conflicts: list[VersionConflict]
    flagged: list[Citation]


def read_overview(kb: KnowledgeBase, *, stale_days: float, low_confidence: float) -> AuditOverview:
    """The audit queries with the page's thresholds; items in review order."""
    with kb.unit("knowledge audit overview") as unit:
        return AuditOverview(
            counts=unit.audit.status_counts(),
            items=review_order(unit.items.items()),
            stale=unit.audit.stale(stale_days),
            expired_cited=unit.audit.expired_but_cited(),
            low_confidence=unit.audit.low_confidence(low_confidence),
            conflicts=unit.audit.conflicts(),
            flagged=unit.feedback.flagged_citations(),
        )


def read_detail(kb: KnowledgeBase, item_id: str) -> ItemDetail:
    with kb.unit("knowledge item detail") as unit:
        return unit.audit.detail(item_id)


# -- tables -------------------------------------------------------------------------

_PUNCTUATION = frozenset(string.punctuation)


def literal(text: str) -> str:
    """Text for Streamlit's markdown elements (captions, alerts) shown exactly as written.

    Item texts, source names, reviewer names and file names come from users; escaping
    every ASCII punctuation mark keeps links, emphasis, ``:emoji:`` codes and ``$math$``
    from being interpreted.
    """
    return "".join(f"\\{c}" if c in _PUNCTUATION else c for c in text)


def _day(when: datetime | None) -> str:
    return when.strftime("%Y-%m-%d") if when else ""


_KIND_LABELS = {
    SourceKind.FIRST_PARTY_SYSTEM: "1st-party system",
    SourceKind.SECOND_PARTY_DOCUMENT: "2nd-party document",
    SourceKind.LEARNED_FROM_EPISODE: "learned",
}


def item_row(item: KnowledgeItem) -> dict[str, Any]:
    """One item version as a table row."""
    return {
        "key": item.key,
        "version": item.version,
        "status": item.status.value,
        "source": item.source_name,
        "kind": _KIND_LABELS[item.source_kind],
        "confidence": round(item.confidence, 2),
        "effective": _day(item.effective_from),
        "expires": _day(item.expires_at),
        "last verified": _day(item.last_verified_at),
        "citations": item.citation_count,
        "reviewer": item.reviewer or "",
        "content": item.content,
    }


def item_label(item: KnowledgeItem) -> str:
    return f"{item.key} v{item.version} · {item.status.value}"


def review_order(items: Iterable[KnowledgeItem]) -> list[KnowledgeItem]:
    """Pending first (the review queue), then active, deprecated, expired; by key, version."""
    rank = {s: i for i, s in enumerate(STATUS_ORDER)}
    return sorted(items, key=lambda i: (rank[i.status], i.key, i.created_at))


def filter_items(
    items: Iterable[KnowledgeItem], *, statuses: Sequence[str] = (), text: str = ""
) -> list[KnowledgeItem]:
    """Items with one of ``statuses`` (any if empty) whose key, source or content has ``text``."""
    wanted = {ItemStatus(s) for s in statuses}
    needle = text.strip().lower()
    return [
        i
        for i in items
        if (not wanted or i.status in wanted)
        and (
            not needle
            or needle in i.key.lower()
            or needle in i.source_name.lower()
            or needle in i.content.lower()
        )
    ]


def status_summary(counts: Mapping[ItemStatus, int]) -> list[tuple[str, int]]:
    """``(label, count)`` per status in review order, for the metric row."""
    return [(s.value.replace("_", " "), int(counts.get(s, 0))) for s in STATUS_ORDER]


def cited_rows(pairs: Iterable[tuple[KnowledgeItem, int]]) -> list[dict[str, Any]]:
    return [
        {"key": item.key, "version": item.version, "cited after expiry": n, **item_row(item)}
        for item, n in pairs
    ]


def conflict_rows(conflicts: Iterable[VersionConflict]) -> list[dict[str, Any]]:
    return [
        {
            "key": c.key,
            "versions": f"v{c.first.version} / v{c.second.version}",
            "overlap": "yes" if c.overlap else "no (scheduled handover)",
            "reason": c.reason,
        }
        for c in conflicts
    ]


def version_rows(detail: ItemDetail) -> list[dict[str, Any]]:
    """All versions of the key, oldest first, the selected one marked in its version cell."""
    return [
        {**item_row(v), "version": f"{v.version} ◀" if v.id == detail.item.id else v.version}
        for v in detail.versions
    ]


def citation_rows(citations: Iterable[Citation]) -> list[dict[str, Any]]:
    return [
        {
            "cited by": f"{c.cited_by_kind.value} {c.cited_by_id}",
            "version": c.item_version,
            "at": c.at.strftime("%Y-%m-%d %H:%M"),
            "session": c.session_id or "",
            "needs review": c.needs_review,
            "flag": c.flag_reason or "",
        }
        for c in citations
    ]


def audit_rows(entries: Iterable[AuditEntry]) -> list[dict[str, Any]]:
    return [
        {
            "at": e.at.strftime("%Y-%m-%d %H:%M:%S"),
            "version": (e.after or e.before or {}).get("version", ""),
            "action": e.action.value,
            "by": e.actor,
            "note": (e.note or "") if e.action is not ReviewAction.SUBMIT else "(diff)",
        }
        for e in entries
    ]


def error_rows(report: ImportReport) -> list[dict[str, Any]]:
    """Row-level import problems as a table (rows count from 1, header excluded)."""
    return [{"row": e.row, "field": e.field, "problem": e.problem} for e in report.errors]


# -- review actions -----------------------------------------------------------------

_ALLOWED: dict[ItemStatus, tuple[ReviewAction, ...]] = {
    ItemStatus.PENDING_REVIEW: (
        ReviewAction.APPROVE,
        ReviewAction.REJECT,
        ReviewAction.EDIT,
        ReviewAction.EXPIRE,
    ),
    ItemStatus.ACTIVE: (ReviewAction.EXPIRE,),
    ItemStatus.DEPRECATED: (ReviewAction.EXPIRE,),
    ItemStatus.EXPIRED: (),
}
_PAST = {
    ReviewAction.APPROVE: "approved",
    ReviewAction.REJECT: "rejected",
    ReviewAction.EDIT: "edited",
    ReviewAction.EXPIRE: "expired",
}


def allowed_actions(item: KnowledgeItem) -> tuple[ReviewAction, ...]:
    """Review actions that make sense for the item's status (active text is never edited)."""
    return _ALLOWED[item.status]


def last_seen(entries: Iterable[AuditEntry], item_id: str) -> int:
    """Id of the item's newest audit entry (0 if none): the state a reviewer is looking at."""
    return max((e.id for e in entries if e.item_id == item_id), default=0)


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """One click of a review button, with the audit state the reviewer saw."""

    action: ReviewAction
    item_id: str
    seen: int
    note: str | None = None
    changes: Mapping[str, Any] | None = None

    @property
    def token(self) -> str:
        """Identifies the click, for keying buttons so a stale click cannot repeat."""
        return f"{self.action.value}:{self.item_id}:{self.seen}"


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    item: KnowledgeItem
    applied: bool
    message: str


_Action = Callable[[KnowledgeRepository, ReviewRequest, str], KnowledgeItem]
_ACTIONS: dict[ReviewAction, _Action] = {
    ReviewAction.APPROVE: lambda repo, r, who: repo.approve(r.item_id, reviewer=who, note=r.note),
    ReviewAction.REJECT: lambda repo, r, who: repo.reject(r.item_id, reviewer=who, note=r.note),
    ReviewAction.EDIT: lambda repo, r, who: repo.edit(
        r.item_id, reviewer=who, changes=r.changes or {}, note=r.note
    ),
    ReviewAction.EXPIRE: lambda repo, r, who: repo.expire(r.item_id, reviewer=who, note=r.note),
}


def apply_review(kb: KnowledgeBase, request: ReviewRequest, identity: Identity) -> ReviewOutcome:
    """Run one review action once, recorded under ``identity``'s name.

    The role is checked here, not only by the page's disabled buttons, so no caller can
    review without the right.

    Raises:
        AccessDeniedError: read-only mode, a role that may not review, or no name;
            nothing is changed.
        InputError: an action the page does not offer, an action the item's status
            forbids, or the item changed since the reviewer saw it.
    """
    who = require(identity, Action.REVIEW).name
    if request.action not in _ACTIONS:
        raise InputError("action", f"must be one of {', '.join(_ACTIONS)}, got {request.action}")
    note = note_text(request.note, "note")
    with kb.unit(f"knowledge review {request.action.value}") as unit:
        since = [e for e in unit.items.audit_log(request.item_id) if e.id > request.seen]
        done = next((e for e in since if e.action is request.action and e.actor == who), None)
        if done is not None:
            return ReviewOutcome(
                unit.items.get(request.item_id),
                False,
                f"Already {_PAST[request.action]} by {who} at {done.at:%Y-%m-%d %H:%M:%S}; "
                "nothing changed.",
            )
        if since:
            last = since[-1]
            raise InputError(
                "item",
                f"changed since you opened it ({last.action.value} by {last.actor}); "
                "review the current state and try again",
            )
        clean = ReviewRequest(request.action, request.item_id, request.seen, note, request.changes)
        item = _ACTIONS[request.action](unit.items, clean, who)
    return ReviewOutcome(item, True, f"{item.label}: {_PAST[request.action]} by {who}.")


def edit_changes(
    item: KnowledgeItem,
    *,
    content: str,
    confidence: float,
    effective_from: date,
    expires_at: date | None,
) -> dict[str, Any]:
    """The fields an edit form changed (only those), in the repository's terms."""
    changes: dict[str, Any] = {}
    if content.strip() != item.content:
        changes["content"] = content
    if abs(float(confidence) - item.confidence) > 1e-9:
        changes["confidence"] = float(confidence)
    if effective_from != item.effective_from.date():
        changes["effective_from"] = effective_from
    if expires_at != (item.expires_at.date() if item.expires_at else None):
        changes["expires_at"] = expires_at
    return changes


# -- import -------------------------------------------------------------------------


def import_upload(kb: KnowledgeBase, name: str, data: bytes, *, identity: Identity) -> ImportReport:
    """Import an uploaded ``.csv`` / ``.json`` file as ``identity``; bad rows come back as
    ``RowError``.

    Raises:
        AccessDeniedError: read-only mode, a role that may not import, or no name.
        UploadError: the file as a whole is refused by the shared reader (a limit, the
            encoding, broken CSV or JSON, unknown columns, the extension): nothing is
            imported.
    """
    actor = require(identity, Action.IMPORT).name
    shown = Path(name).name or "upload"
    if Path(shown).suffix.lower().lstrip(".") not in IMPORT_TYPES:
        raise UploadError(shown, "file", f"must end in .csv or .json, got {excerpt(shown)}")
    return import_records(kb, decode_records(shown, data), actor=actor)


def import_summary(name: str, report: ImportReport, *, shown: int = 3) -> str:
    """One line saying what an import did and, when rows were refused, why."""

    def rows(n: int) -> str:
        return f"{n} row{'' if n == 1 else 's'}"

    text = f"{name}: {rows(len(report.imported))} imported"
    rejected = report.rejected_rows
    if not rejected:
        return text + "."
    reasons = "; ".join(str(e) for e in report.errors[:shown])
    more = len(report.errors) - shown
    return (
        f"{text}, {rows(len(rejected))} rejected: {reasons}"
        + (f"; and {more} more problems (table below)" if more > 0 else "")
        + "."
    )
