"""The eviction log: filter, sort, page and export evictions, and restore evicted memories.

Rows come from the in-memory event buffer (the live atlas, always available) or from
the database's event log (``memory_core.store``), both mapped to one ``EvictionRow``
so the page does not care where they came from. Restoring re-adds the logged content
as a new memory; the ledger makes a second click on the same row a no-op.
"""

from __future__ import annotations

import csv
import io
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime, to_epoch
from memory_core.engine.config import AtlasConfig
from memory_core.engine.events import MemoryEvicted
from memory_core.engine.model import EvictionReason, MemoryKind, MemoryNode
from memory_core.errors import InputError
from memory_core.harness.forecast import Forecast, forecast

if TYPE_CHECKING:
    from memory_core.store.records import StoredEvent
    from memory_core.store.repositories import EventRepository

SortKey = Literal["at", "weight", "session_id", "reason", "age_hours"]
SORT_KEYS: tuple[SortKey, ...] = ("at", "weight", "session_id", "reason", "age_hours")
DB_SORT_KEYS = ("at", "session_id", "reason")
MAX_PAGE_SIZE = 1_000
ERASED_TEXT = "(text erased with its purged session)"
NOT_FORGETTING = frozenset({EvictionReason.SESSION_PURGE.value})
"""Removals that are not forgetting: a purge (a Reset of the demo) erases on purpose."""
CSV_COLUMNS = (
    "evicted_at",
    "node_id",
    "session_id",
    "reason",
    "kind",
    "weight",
    "age_hours",
    "access_count",
    "content",
)


@dataclass(frozen=True, slots=True)
class EvictionRow:
    """One eviction; ``content`` is None when the log kept no text (privacy policy)."""

    at: float
    node_id: str
    session_id: str
    reason: str
    kind: str
    weight: float | None
    age_hours: float | None
    access_count: int | None
    content: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    provenance: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Identity of this eviction (a node can only be evicted once)."""
        return self.node_id

    @property
    def restorable(self) -> bool:
        return bool(self.content and self.content.strip())

    @property
    def erased(self) -> bool:
        """No text was kept (a purged session, or a log policy that stores none)."""
        return not self.restorable

    def as_record(self) -> dict[str, Any]:
        return {
            "evicted_at": to_datetime(self.at).isoformat(timespec="seconds"),
            "node_id": self.node_id,
            "session_id": self.session_id,
            "reason": self.reason,
            "kind": self.kind,
            "weight": self.weight,
            "age_hours": self.age_hours,
            "access_count": self.access_count,
            "content": self.content,
        }

    def display_record(self) -> dict[str, Any]:
        """``as_record`` for the table on screen: erased text says so instead of a blank."""
        return {**self.as_record(), "content": ERASED_TEXT if self.erased else self.content}


@dataclass(frozen=True, slots=True)
class EvictionQuery:
    """Filters (AND), sort order and page; ``since`` inclusive, ``until`` exclusive."""

    reasons: tuple[str, ...] = ()
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    text: str = ""
    sort_by: SortKey = "at"
    descending: bool = True
    page: int = 0
    page_size: int = 25
    include_erased: bool = False
    """Rows without text can be neither searched nor restored: hidden unless asked for."""

    def __post_init__(self) -> None:
        for reason in self.reasons:
            if reason not in EvictionReason.__members__.values():
                raise InputError("reasons", f"{reason!r} is not one of {', '.join(EvictionReason)}")
        if self.sort_by not in SORT_KEYS:
            raise InputError("sort_by", f"must be one of {', '.join(SORT_KEYS)}")
        if isinstance(self.page, bool) or not isinstance(self.page, int) or self.page < 0:
            raise InputError("page", f"must be an integer >= 0, got {self.page!r}")
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise InputError("page_size", f"must be in [1, {MAX_PAGE_SIZE}], got {self.page_size}")
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None and value.tzinfo is None:
                raise InputError(name, "must be a timezone-aware datetime")
        if self.since and self.until and self.since > self.until:
            raise InputError("since", "is after until")

    def matches(self, row: EvictionRow) -> bool:
        needle = self.text.strip().casefold()
        return (
            (not self.reasons or row.reason in self.reasons)
            and (self.session_id is None or row.session_id == self.session_id)
            and (self.since is None or row.at >= to_epoch(self.since))
            and (self.until is None or row.at < to_epoch(self.until))
            and (not needle or (row.content is not None and needle in row.content.casefold()))
            and (self.include_erased or not row.erased)
        )


@dataclass(frozen=True, slots=True)
class EvictionPage:
    rows: tuple[EvictionRow, ...]
    total: int
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


def row_from_event(event: MemoryEvicted) -> EvictionRow:
    return EvictionRow(
        at=event.at,
        node_id=event.node_id,
        session_id=event.session_id or "",
        reason=event.reason.value,
        kind=event.kind.value,
        weight=event.weight,
        age_hours=max(0.0, (event.at - event.created_at) / 3600.0),
        access_count=event.access_count,
        content=event.content or None,  # a purged session's row keeps no text
        metadata=dict(event.metadata),
        provenance=tuple(event.provenance),
    )


def row_from_stored(event: StoredEvent) -> EvictionRow:
    """Map a logged ``evicted`` event; payload fields may be missing under privacy policies."""
    payload = event.payload
    at = event.at.timestamp()
    created = payload.get("created_at")
    return EvictionRow(
        at=at,
        node_id=event.node_id or str(payload.get("node_id", "")),
        session_id=event.session_id or "",
        reason=event.reason or str(payload.get("reason", "")),
        kind=str(payload.get("kind", MemoryKind.SESSION.value)),
        weight=_float_or_none(payload.get("weight")),
        age_hours=None if created is None else max(0.0, (at - float(created)) / 3600.0),
        access_count=_int_or_none(payload.get("access_count")),
        content=event.content,
        metadata=dict(payload.get("metadata") or {}),
        provenance=tuple(payload.get("provenance") or ()),
    )


def matching_rows(rows: Iterable[EvictionRow], query: EvictionQuery) -> list[EvictionRow]:
    """Every row passing the filters, sorted (missing values last, node id breaking ties)."""
    matching = [r for r in rows if query.matches(r)]
    present = [r for r in matching if getattr(r, query.sort_by) is not None]
    missing = [r for r in matching if getattr(r, query.sort_by) is None]
    present.sort(key=lambda r: r.node_id, reverse=query.descending)
    present.sort(key=lambda r: getattr(r, query.sort_by), reverse=query.descending)
    return present + sorted(missing, key=lambda r: r.node_id)


def query_rows(rows: Iterable[EvictionRow], query: EvictionQuery) -> EvictionPage:
    """Filter, sort and cut one page."""
    ordered = matching_rows(rows, query)
    start = query.page * query.page_size
    return EvictionPage(
        tuple(ordered[start : start + query.page_size]), len(ordered), query.page, query.page_size
    )


def query_events(events: Iterable[MemoryEvicted], query: EvictionQuery) -> EvictionPage:
    """The eviction log of the in-memory buffer."""
    return query_rows((row_from_event(e) for e in events), query)


def query_database(
    repo: EventRepository, query: EvictionQuery, *, atlas_id: str | None = None
) -> EvictionPage:
    """The eviction log from the database, filtered, sorted and paged by SQL."""
    from memory_core.store.records import EventFilter

    if query.sort_by not in DB_SORT_KEYS:
        raise InputError(
            "sort_by",
            f"the database log sorts by {', '.join(DB_SORT_KEYS)} only, got {query.sort_by!r}",
        )
    flt = EventFilter(
        atlas_id=atlas_id,
        types=("evicted",),
        session_id=query.session_id,
        reasons=query.reasons,
        since=query.since,
        until=query.until,
        text=query.text.strip() or None,
    )
    page = repo.query(
        flt,
        offset=query.page * query.page_size,
        limit=query.page_size,
        order_by=query.sort_by,  # type: ignore[arg-type]  # checked against DB_SORT_KEYS
        descending=query.descending,
    )
    return EvictionPage(
        tuple(row_from_stored(e) for e in page.items), page.total, query.page, query.page_size
    )


def to_csv(rows: Sequence[EvictionRow]) -> bytes:
    """UTF-8 CSV with a header; formulas are defused for spreadsheet safety."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(v) for k, v in row.as_record().items()})
    return out.getvalue().encode("utf-8")


def forgotten_total(stats: dict[str, Any]) -> int:
    """Evictions from ``atlas.stats()`` that were forgetting, i.e. not a purge on purpose."""
    by_reason: dict[str, int] = stats.get("evicted", {})
    return sum(n for reason, n in by_reason.items() if reason not in NOT_FORGETTING)


def eviction_forecast(
    atlas: ElasticMemoryAtlas, *, hours: float, decay_rate: float, steps: int = 48
) -> Forecast:
    """What the decay pass would evict over the next ``hours`` if it ran at ``decay_rate``
    and nobody touched the memory (the atlas keeps its own rate)."""
    config = AtlasConfig.from_mapping({"decay_rate": decay_rate}, atlas.config)
    return forecast(atlas, hours=hours, steps=steps, config=config)


def time_range(
    rows: Iterable[EvictionRow], *, min_seconds: float = 60.0
) -> tuple[datetime, datetime] | None:
    """Whole-minute bounds around the rows' times for a range slider (its step is a
    minute), None when they span less than ``min_seconds`` (a slider over one moment only
    confuses). On the minute grid the slider cannot snap its upper end below the newest
    rows: off the grid it did, and a skipped year's evictions, all at the newest instant,
    fell out of the untouched full range (issue #25)."""
    times = [row.at for row in rows]
    if not times or max(times) - min(times) < min_seconds:
        return None
    low = 60 * math.floor(min(times) / 60)
    return to_datetime(low), to_datetime(60 * (math.floor(max(times) / 60) + 1))


def empty_text(rows: Sequence[EvictionRow], query: EvictionQuery) -> str:
    """What an empty eviction page says: that nothing was evicted yet, or how many
    evictions there are and which of the filters hide them, so the text agrees with the
    counts beside it."""
    if not rows:
        return (
            "No eviction yet in this run. Play the demo for a minute, or skip ahead on the "
            "Live graph page."
        )
    hidden = []
    for name, alone in (
        ("reason", replace(EvictionQuery(), reasons=query.reasons, include_erased=True)),
        ("session", replace(EvictionQuery(), session_id=query.session_id, include_erased=True)),
        ("text", replace(EvictionQuery(), text=query.text, include_erased=True)),
        (
            "time range",
            replace(EvictionQuery(), since=query.since, until=query.until, include_erased=True),
        ),
        (
            "erased text (tick 'Show evictions whose text was erased')",
            replace(EvictionQuery(), include_erased=query.include_erased),
        ),
    ):
        excluded = sum(not alone.matches(r) for r in rows)
        if excluded:
            hidden.append(f"{name} hides {excluded}")
    return (
        f"None of the {len(rows)} evictions in this run match the filters: "
        + "; ".join(hidden)
        + "."
    )


def reason_counts(rows: Iterable[EvictionRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.reason] = counts.get(row.reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass(frozen=True, slots=True)
class RestoreResult:
    node: MemoryNode
    already_restored: bool


class RestoreLedger:
    """Remembers which evictions were restored, so repeated clicks add nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._restored: dict[str, str] = {}

    def restored_id(self, row: EvictionRow) -> str | None:
        with self._lock:
            return self._restored.get(row.key)

    def restore(self, atlas: ElasticMemoryAtlas, row: EvictionRow) -> RestoreResult:
        """Add the evicted content back as a fresh memory of its session (once)."""
        if not row.restorable or row.content is None:
            raise InputError("content", "this eviction was logged without its text; cannot restore")
        with self._lock:
            done = self._restored.get(row.key)
            if done is not None and done in atlas:
                return RestoreResult(atlas.get(done), already_restored=True)
            node = atlas.add(
                row.content,
                session_id=row.session_id or "default",
                kind=row.kind
                if row.kind in MemoryKind.__members__.values()
                else MemoryKind.SESSION,
                metadata={**row.metadata, "restored_from": row.node_id},
                provenance=(*row.provenance, row.node_id),
            )
            self._restored[row.key] = node.id
            return RestoreResult(node, already_restored=False)


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
