"""The sample knowledge base (top-level ``sample_knowledge/``), loaded idempotently.

``knowledge.json`` holds reviewed versions (each record may carry a ``review`` and
``citations`` for the loader); ``review_queue.csv`` holds items left for a reviewer.
Loading twice adds nothing: versions and citations that exist are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_core.errors import InputError
from memory_core.knowledge.importer import read_records
from memory_core.knowledge.items import CitedBy, ItemStatus
from memory_core.knowledge.service import KnowledgeBase, KnowledgeUnit

SAMPLE_ACTOR = "sample-loader"
_LOADER_FIELDS = ("review", "citations")


def sample_folder() -> Path:
    """``sample_knowledge/`` next to the package (a source checkout or editable install)."""
    return Path(__file__).resolve().parents[2] / "sample_knowledge"


@dataclass(frozen=True, slots=True)
class SampleReport:
    added_items: int
    added_citations: int
    skipped: int


def _existing(unit: KnowledgeUnit, key: str, version: str) -> str | None:
    return next((v.id for v in unit.items.versions(key) if v.version == version), None)


def _add(unit: KnowledgeUnit, record: dict[str, Any], source: str) -> str:
    item = {k: v for k, v in record.items() if k not in _LOADER_FIELDS}
    submission = unit.items.submit(item, actor=SAMPLE_ACTOR)
    if submission.item is None:
        problems = "; ".join(str(p) for p in submission.result.problems)
        raise InputError(source, f"sample item {item.get('key')} refused: {problems}")
    review = record.get("review")
    if review and submission.item.status is ItemStatus.PENDING_REVIEW:
        if review["action"] != "approve":
            raise InputError(source, f"sample review action must be 'approve', got {review!r}")
        unit.items.approve(submission.item.id, reviewer=review["reviewer"], note=review.get("note"))
    return submission.item.id


def _cite(unit: KnowledgeUnit, item_id: str, citation: dict[str, Any]) -> bool:
    if any(c.cited_by_id == citation["cited_by_id"] for c in unit.feedback.citations(item_id)):
        return False
    unit.feedback.cite(
        item_id,
        cited_by_id=citation["cited_by_id"],
        cited_by_kind=CitedBy(citation.get("cited_by_kind", CitedBy.MEMORY.value)),
        session_id=citation.get("session_id"),
        at=citation.get("at"),
    )
    return True


def load_sample_knowledge(kb: KnowledgeBase, *, folder: Path | None = None) -> SampleReport:
    """Load the shipped sample in one transaction; safe to call on every start."""
    root = folder or sample_folder()
    doc = json.loads((root / "knowledge.json").read_text(encoding="utf-8"))
    queue = read_records(root / "review_queue.csv")
    added = cites = skipped = 0
    with kb.unit("load sample knowledge") as unit:
        for record in doc["items"]:
            item_id = _existing(unit, record["key"], record["version"])
            if item_id is None:
                item_id = _add(unit, record, "knowledge.json")
                added += 1
            else:
                skipped += 1
            for citation in record.get("citations", ()):
                cites += _cite(unit, item_id, citation)
        for row_number, (record, problems) in enumerate(queue, start=1):
            if record is None or problems:
                raise InputError(f"review_queue.csv row {row_number}", str(problems))
            if _existing(unit, record["key"], record["version"]) is not None:
                skipped += 1
                continue
            _add(unit, record, f"review_queue.csv row {row_number}")
            added += 1
    return SampleReport(added_items=added, added_citations=cites, skipped=skipped)
