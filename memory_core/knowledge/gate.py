"""The ingestion gate: schema, logic rules, the seed's three questions and a diff.

Nothing is written here; the gate only decides. The repository writes what the gate
accepted, with the status the gate chose (review unless the source is trusted).
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from importlib import resources
from typing import Any

import jsonschema

from memory_core.boundary import excerpt
from memory_core.errors import InputError
from memory_core.knowledge.items import (
    Checklist,
    ItemDraft,
    ItemStatus,
    KnowledgeItem,
    SourceKind,
)
from memory_core.knowledge.rules import RuleRegistry
from memory_core.knowledge.settings import KnowledgeSettings


@dataclass(frozen=True, slots=True)
class GateProblem:
    """One reason an item was refused, naming the field."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(frozen=True, slots=True, kw_only=True)
class GateResult:
    """Everything the gate found: every problem, the diff to the newest version, the status."""

    draft: ItemDraft | None
    problems: tuple[GateProblem, ...]
    previous: KnowledgeItem | None = None
    diff: str = ""
    status: ItemStatus | None = None

    @property
    def accepted(self) -> bool:
        return not self.problems


@functools.cache
def item_schema() -> dict[str, Any]:
    """The JSON Schema of a submitted item (shipped in the package)."""
    text = resources.files("memory_core.knowledge").joinpath("schema/knowledge-item.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


def parse_when(value: object, field: str) -> datetime:
    """ISO date / date-time or aware datetime -> UTC datetime; dates mean midnight UTC."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InputError(field, "datetime must be timezone-aware")
        return value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        raise InputError(field, f"expected an ISO date or date-time string, got {excerpt(value)}")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise InputError(field, f"not an ISO date or date-time: {excerpt(value)}") from exc
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def render_version(item: ItemDraft | KnowledgeItem) -> list[str]:
    """The lines a reviewer compares: metadata first, then the content."""
    expires = item.expires_at.isoformat() if item.expires_at else "never"
    return [
        f"version: {item.version}",
        f"source: {item.source_kind.value} / {item.source_name}",
        f"effective_from: {item.effective_from.isoformat()}",
        f"expires_at: {expires}",
        f"confidence: {item.confidence:g}",
        "",
        *item.content.splitlines(),
    ]


def version_diff(old: ItemDraft | KnowledgeItem | None, new: ItemDraft | KnowledgeItem) -> str:
    """Unified diff between two versions of a key (everything added when there is no old)."""
    before = render_version(old) if old is not None else []
    old_name = f"{old.key} v{old.version}" if old is not None else "(none)"
    lines = difflib.unified_diff(
        before,
        render_version(new),
        fromfile=old_name,
        tofile=f"{new.key} v{new.version}",
        lineterm="",
    )
    return "\n".join(lines)


def _schema_problem(err: jsonschema.ValidationError) -> GateProblem:
    """Name the field: the missing property for ``required``, else the JSON path."""
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [p for p in err.validator_value if p not in err.instance]
        if missing:
            return GateProblem(str(missing[0]), "is required")
    path = ".".join(str(p) for p in err.absolute_path) or "item"
    return GateProblem(path, _schema_message(err))


def _schema_message(err: jsonschema.ValidationError) -> str:
    """jsonschema's message without the whole offending value (it repeats a 1 MB field in
    full): lengths and limits in words, any quoted value shortened to an excerpt."""
    value, limit = err.instance, err.validator_value
    if err.validator == "maxLength" and isinstance(value, str):
        return f"has {len(value):,} characters; at most {limit:,} allowed"
    if err.validator == "minLength" and isinstance(value, str):
        return "must not be empty" if limit == 1 else f"must have at least {limit} characters"
    if err.validator == "pattern":
        return f"{excerpt(value)} does not match {limit}"
    message, quoted = str(err.message), repr(value)
    return message.replace(quoted, excerpt(value)) if len(quoted) > 80 else message


def complete_checklist(draft: ItemDraft) -> Checklist:
    """Fill answers the gate can know: a named system or document is verifiable at its
    source; an expiry date is a clear validity period. Learned items stay unknown."""
    given = draft.checklist
    verifiable = given.verifiable
    if verifiable is None and draft.source_kind is not SourceKind.LEARNED_FROM_EPISODE:
        verifiable = True
    clear = given.clear_validity
    if clear is None and draft.expires_at is not None:
        clear = True
    return Checklist(verifiable=verifiable, used_often=given.used_often, clear_validity=clear)


class IngestionGate:
    """Decides whether a draft may be stored and with which status."""

    __slots__ = ("_rules", "_settings", "_validator")

    def __init__(self, *, settings: KnowledgeSettings, rules: RuleRegistry | None = None) -> None:
        self._settings = settings
        self._rules = rules or RuleRegistry()
        self._validator = jsonschema.Draft202012Validator(item_schema())

    @property
    def rules(self) -> RuleRegistry:
        return self._rules

    def parse(self, raw: Mapping[str, Any]) -> tuple[ItemDraft | None, list[GateProblem]]:
        """Validate a mapping (JSON object, CSV row) against the schema and build a draft.

        Every schema and date problem is reported, not only the first.
        """
        problems = [_schema_problem(err) for err in self._validator.iter_errors(dict(raw))]
        dates: dict[str, datetime | None] = {"effective_from": None, "expires_at": None}
        for name in dates:
            if isinstance(raw.get(name), str):
                try:
                    dates[name] = parse_when(raw[name], name)
                except InputError as exc:
                    problems.append(GateProblem(exc.field, exc.problem))
        if problems:
            return None, sorted(set(problems), key=lambda p: (p.field, p.message))
        effective = dates["effective_from"]
        if effective is None:  # unreachable past the schema; keeps the type honest
            return None, [GateProblem("effective_from", "is required")]
        draft = ItemDraft(
            key=raw["key"].strip(),
            content=raw["content"].strip(),
            source_kind=SourceKind(raw["source_kind"]),
            source_name=raw["source_name"].strip(),
            version=raw["version"].strip(),
            effective_from=effective,
            expires_at=dates["expires_at"],
            confidence=float(raw.get("confidence", 1.0)),
            checklist=Checklist.from_dict(raw.get("checklist")),
            data=raw.get("data"),
            session_id=raw.get("session_id"),
            user_id=raw.get("user_id"),
        )
        return draft, []

    def evaluate(
        self, draft: ItemDraft, previous: KnowledgeItem | None, *, skip_rules: tuple[str, ...] = ()
    ) -> GateResult:
        """Run the rules and the three questions; pick ``active`` only for trusted sources."""
        draft = replace(draft, checklist=complete_checklist(draft))
        found = self._rules.check(draft, previous, skip=skip_rules)
        problems = [GateProblem(f, m) for f, m in found]
        problems.extend(
            GateProblem(
                f"checklist.{name}",
                "answered no; only verifiable, frequently used knowledge with a clear "
                "validity period is admitted",
            )
            for name in draft.checklist.refused()
        )
        if problems:
            return GateResult(draft=draft, problems=tuple(problems), previous=previous)
        trusted = self._settings.is_trusted(draft.source_name)
        return GateResult(
            draft=draft,
            problems=(),
            previous=previous,
            diff=version_diff(previous, draft),
            status=ItemStatus.ACTIVE if trusted else ItemStatus.PENDING_REVIEW,
        )
