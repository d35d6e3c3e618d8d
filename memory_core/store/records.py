"""Plain values that cross the repository boundary (no ORM objects leak out)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from memory_core.errors import InputError
from memory_core.store.event_filter import EVICTED as EVICTED
from memory_core.store.event_filter import EventFilter as EventFilter

T = TypeVar("T")

MAX_PAGE = 10_000
SORT_FIELDS = ("at", "id", "type", "session_id", "node_id", "reason")
SortField = Literal["at", "id", "type", "session_id", "node_id", "reason"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventRecord:
    """An event ready to be written: the privacy policy has already been applied.

    ``weights`` (node id -> weight) become weight samples; they are not kept in the payload.
    ``seq`` numbers one atlas's events 1, 2, 3... as published, so a follower sees gaps.
    """

    atlas_id: str
    type: str
    at: datetime
    session_id: str | None = None
    node_id: str | None = None
    user_id: str | None = None
    reason: str | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)
    content: str | None = None
    weights: Mapping[str, float] = field(default_factory=dict)
    seq: int | None = None

    def __post_init__(self) -> None:
        if self.at.tzinfo is None:
            raise InputError("at", "must be a timezone-aware datetime")


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredEvent:
    """An event as read back, with its database id."""

    id: int
    atlas_id: str
    type: str
    at: datetime
    session_id: str | None
    node_id: str | None
    user_id: str | None
    reason: str | None
    payload: dict[str, Any]
    content: str | None
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a sorted result and the total number of matches."""

    items: tuple[T, ...]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True, slots=True)
class WeightPoint:
    """A node's weight at one instant and the event type that reported it."""

    at: datetime
    weight: float
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """A simulation run: what was asked (params, policy) and what came out."""

    id: str
    name: str
    created_at: datetime
    policy: str
    params: dict[str, Any]
    metrics: dict[str, Any]
    fact_results: list[Any]
    conversations: list[Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotInfo:
    """A recorded atlas snapshot without its bytes."""

    id: str
    atlas_id: str
    label: str
    created_at: datetime
    format_version: int
    node_count: int
    edge_count: int
    size_bytes: int
    sha256: str
    sessions: tuple[str, ...]
    event_seq: int | None = None
    """How many of its atlas's events (``seq``) the snapshot contains: a checkpoint for a
    follower, which applies the events after it. None: not taken by a recorder."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AtlasInfo:
    """An atlas known to the database; ``kind`` is ``live`` or ``recorded``."""

    id: str
    name: str
    kind: str
    created_at: datetime
    last_seen: datetime


ATLAS_KINDS = ("live", "recorded")


def check_page(offset: int, limit: int) -> None:
    """Refuse pages the UI could not have meant."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InputError("offset", f"must be an integer >= 0, got {offset!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InputError("limit", f"must be an integer in [1, {MAX_PAGE}], got {limit!r}")


def check_sort(order_by: str) -> None:
    if order_by not in SORT_FIELDS:
        raise InputError("order_by", f"{order_by!r} is not one of {', '.join(SORT_FIELDS)}")


def check_text(field_name: str, value: str, max_len: int = 255) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InputError(field_name, "must be a non-empty string")
    if len(value) > max_len:
        raise InputError(field_name, f"must be at most {max_len} characters, got {len(value)}")


def check_kind(kind: str) -> None:
    if kind not in ATLAS_KINDS:
        raise InputError("kind", f"{kind!r} is not one of {', '.join(ATLAS_KINDS)}")


def check_snapshot_args(
    atlas_id: str, label: str, data: bytes, format_version: int, node_count: int, edge_count: int
) -> None:
    """Validation shared by both snapshot repositories."""
    check_text("atlas_id", atlas_id, 64)
    check_text("label", label)
    if not isinstance(data, (bytes, bytearray, memoryview)) or len(data) == 0:
        raise InputError("data", "must be the non-empty bytes of a snapshot file")
    for name, value in (
        ("format_version", format_version),
        ("node_count", node_count),
        ("edge_count", edge_count),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(name, f"must be an integer >= 0, got {value!r}")
