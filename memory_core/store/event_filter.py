"""Which events a query wants: one field table drives validation, Python and SQL matching.

``FILTER_FIELDS`` says, for each field of ``EventFilter``, which event column it tests
and how (``Match``). The in-memory repositories match with ``EventFilter.matches``; the
SQL ones translate the same ``EventFilter.active()`` triples into WHERE clauses
(``sql.event_conditions``). Adding a filter field is one dataclass field and one row.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_core.errors import InputError

EVICTED = "evicted"


class Match(enum.Enum):
    """How a filter value is compared with an event's column."""

    EQUALS = "equals"
    ONE_OF = "one_of"
    AT_LEAST = "at_least"
    BEFORE = "before"
    CONTAINS = "contains"  # case-insensitive substring; wildcards are literal


@dataclass(frozen=True, slots=True)
class FilterField:
    """One row of the field table: filter attribute, event column, comparison."""

    name: str
    column: str
    match: Match


FILTER_FIELDS: tuple[FilterField, ...] = (
    FilterField("atlas_id", "atlas_id", Match.EQUALS),
    FilterField("types", "type", Match.ONE_OF),
    FilterField("session_id", "session_id", Match.EQUALS),
    FilterField("node_id", "node_id", Match.EQUALS),
    FilterField("user_id", "user_id", Match.EQUALS),
    FilterField("reasons", "reason", Match.ONE_OF),
    FilterField("since", "at", Match.AT_LEAST),
    FilterField("until", "at", Match.BEFORE),
    FilterField("text", "content", Match.CONTAINS),
)

# ONE_OF and CONTAINS are off when empty; the others when None (an empty id is a value).
_OFF_WHEN_EMPTY = frozenset({Match.ONE_OF, Match.CONTAINS})


def _contains(value: Any, needle: str) -> bool:
    return value is not None and needle.lower() in str(value).lower()


PY_MATCH: dict[Match, Callable[[Any, Any], bool]] = {
    Match.EQUALS: lambda value, wanted: bool(value == wanted),
    Match.ONE_OF: lambda value, wanted: value in wanted,
    Match.AT_LEAST: lambda value, wanted: bool(value >= wanted),
    Match.BEFORE: lambda value, wanted: bool(value < wanted),
    Match.CONTAINS: _contains,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class EventFilter:
    """Conditions combined with AND; ``since`` is inclusive, ``until`` exclusive.

    ``text`` is a case-insensitive substring of the logged content (only events logged
    with ``log_content="full"`` have any).
    """

    atlas_id: str | None = None
    types: tuple[str, ...] = ()
    session_id: str | None = None
    node_id: str | None = None
    user_id: str | None = None
    reasons: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        for f in FILTER_FIELDS:
            value = getattr(self, f.name)
            if f.match is Match.ONE_OF and isinstance(value, str):
                raise InputError(f.name, "must be a tuple of strings, not one string")
            is_time = f.match in (Match.AT_LEAST, Match.BEFORE)
            if is_time and value is not None and value.tzinfo is None:
                raise InputError(f.name, "must be a timezone-aware datetime")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InputError(
                "since", f"{self.since.isoformat()} is after until {self.until.isoformat()}"
            )

    def active(self) -> Iterator[tuple[str, Match, Any]]:
        """(event column, match, wanted value) for every condition that is switched on."""
        for f in FILTER_FIELDS:
            value = getattr(self, f.name)
            off = not value if f.match in _OFF_WHEN_EMPTY else value is None
            if not off:
                yield f.column, f.match, value

    def matches(self, event: object) -> bool:
        """Whether an event (any object with the event columns) passes every condition."""
        return all(
            PY_MATCH[match](getattr(event, column), wanted)
            for column, match, wanted in self.active()
        )

    def evictions(self) -> EventFilter:
        """The same conditions restricted to eviction events."""
        return dataclasses.replace(self, types=(EVICTED,))
