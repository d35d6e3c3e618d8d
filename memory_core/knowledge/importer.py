"""Bulk import from CSV or JSON with row-level errors.

Each row goes through the gate in its own transaction: a valid row is stored whole, an
invalid row is reported (row number, field, problem) and leaves nothing behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.boundary import MAX_DEPTH, FileLimits, csv_rows, excerpt, json_depth, json_rows
from memory_core.errors import AtlasError, InputError, StoreUnavailableError, UploadError
from memory_core.knowledge.feedback import SYSTEM_ACTOR
from memory_core.knowledge.gate import item_schema
from memory_core.knowledge.items import KnowledgeItem
from memory_core.knowledge.service import KnowledgeBase

CHECKLIST_COLUMNS = ("verifiable", "used_often", "clear_validity")
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


@dataclass(frozen=True, slots=True)
class RowError:
    """One problem of one input row (rows count from 1, header not included)."""

    row: int
    field: str
    problem: str

    def __str__(self) -> str:
        return f"row {self.row}: {self.field}: {self.problem}"


@dataclass(slots=True)
class ImportReport:
    """What an import stored and what it refused."""

    imported: list[KnowledgeItem] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)

    @property
    def rejected_rows(self) -> list[int]:
        return sorted({e.row for e in self.errors})


def csv_columns() -> tuple[str, ...]:
    """Accepted CSV header names: the schema's fields, with the checklist flattened."""
    props = [p for p in item_schema()["properties"] if p != "checklist"]
    return (*props, *CHECKLIST_COLUMNS)


def _csv_value(column: str, text: str) -> tuple[Any, str | None]:
    if column in CHECKLIST_COLUMNS:
        low = text.lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE, None
        return None, "must be yes/no, true/false or 1/0"
    if column == "confidence":
        try:
            return float(text), None
        except ValueError:
            return None, f"must be a number in [0, 1], got {excerpt(text)}"
    if column == "data":
        depth = json_depth(text)
        if depth > MAX_DEPTH:
            return None, f"nests {depth:,} levels deep; at most {MAX_DEPTH} allowed"
        try:
            return json.loads(text), None
        except (ValueError, RecursionError) as exc:
            return None, f"must be a JSON object ({getattr(exc, 'msg', 'invalid JSON')})"
    return text, None


def csv_record(row: Mapping[str, str | None]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """One CSV row -> item mapping; empty cells are absent fields."""
    record: dict[str, Any] = {}
    checklist: dict[str, Any] = {}
    problems = []
    for column, raw in row.items():
        if column is None:  # csv.DictReader puts cells beyond the header under None
            problems.append(("row", "has more cells than the header has columns"))
            continue
        text = (raw or "").strip()
        if not text:
            continue
        value, problem = _csv_value(column, text)
        if problem is not None:
            problems.append((column, problem))
        elif column in CHECKLIST_COLUMNS:
            checklist[column] = value
        else:
            record[column] = value
    if checklist:
        record["checklist"] = checklist
    return record, problems


Decoded = tuple[dict[str, Any] | None, list[tuple[str, str]]]


IMPORT_LIMITS = FileLimits(max_bytes=20 * 1024 * 1024, max_field_chars=20_000, max_rows=10_000)
"""What one import file may be: the longest string is the schema's longest field (content)."""


def read_records(path: Path) -> list[Decoded]:
    """Rows of a ``.csv`` or ``.json`` file with their decoding problems (``decode_records``)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError("file", f"cannot read {path.name}: {exc.strerror}") from exc
    return decode_records(path.name, data)


def decode_records(name: str, data: bytes, limits: FileLimits = IMPORT_LIMITS) -> list[Decoded]:
    """Rows of an import file named ``name`` (its extension says CSV or JSON).

    The shared reader checks size, encoding, nesting depth, string lengths and row count
    before any row is looked at; rows then come back with their own problems.

    Raises:
        UploadError: the file as a whole is refused (a limit, broken CSV or JSON, unknown
            columns, an unsupported extension); nothing is imported.
    """
    suffix = Path(name).suffix.lower()
    if suffix == ".csv":
        return [csv_record(row) for row in csv_rows(name, data, limits, columns=csv_columns())]
    if suffix == ".json":
        return [
            (r, []) if isinstance(r, dict) else (None, [("item", "must be an object")])
            for r in json_rows(name, data, limits, wrapper="items")
        ]
    raise UploadError(
        name, "file", f"unsupported extension {excerpt(suffix, 20)}; use .csv or .json"
    )


def import_records(
    kb: KnowledgeBase,
    records: Iterable[Decoded],
    *,
    actor: str = SYSTEM_ACTOR,
) -> ImportReport:
    """Submit each record in its own transaction; collect every row's problems."""
    report = ImportReport()
    for number, (record, problems) in enumerate(records, start=1):
        if record is None or problems:  # decoding failed; the schema may say more
            schema_problems = kb.gate.parse(record)[1] if record is not None else []
            found = {*problems, *((p.field, p.message) for p in schema_problems)}
            report.errors += [RowError(number, f, p) for f, p in sorted(found)]
            continue
        try:
            with kb.unit("knowledge import row") as unit:
                submission = unit.items.submit(record, actor=actor)
        except StoreUnavailableError:
            raise
        except AtlasError as exc:
            report.errors.append(RowError(number, getattr(exc, "field", "item"), str(exc)))
            continue
        if submission.item is None:
            report.errors += [
                RowError(number, p.field, p.message) for p in submission.result.problems
            ]
        else:
            report.imported.append(submission.item)
    return report


def import_file(kb: KnowledgeBase, path: str | Path, *, actor: str = SYSTEM_ACTOR) -> ImportReport:
    """Import a CSV or JSON file of knowledge items (see ``csv_columns`` and the schema)."""
    return import_records(kb, read_records(Path(path)), actor=actor)
