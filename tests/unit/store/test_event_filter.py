"""The event filter's field table: every field has a row, and matching follows it."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from memory_core.errors import InputError
from memory_core.store.event_filter import FILTER_FIELDS, EventFilter, Match
from memory_core.store.records import StoredEvent

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _event(**kw: object) -> StoredEvent:
    base: dict[str, object] = {
        "id": 1,
        "atlas_id": "a",
        "type": "added",
        "at": T0,
        "session_id": "s",
        "node_id": "n",
        "user_id": "u",
        "reason": None,
        "payload": {},
        "content": "Paris is 50% rain",
    }
    base.update(kw)
    return StoredEvent(**base)  # type: ignore[arg-type]


def test_every_filter_field_has_exactly_one_row() -> None:
    names = [f.name for f in dataclasses.fields(EventFilter)]
    assert sorted(names) == sorted(f.name for f in FILTER_FIELDS)
    columns = {f.name for f in dataclasses.fields(StoredEvent)}
    assert {f.column for f in FILTER_FIELDS} <= columns


def test_empty_filter_has_no_conditions_and_matches_all() -> None:
    assert list(EventFilter().active()) == []
    assert EventFilter(types=(), text="").matches(_event())


def test_each_test_kind() -> None:
    e = _event()
    assert EventFilter(atlas_id="a").matches(e) and not EventFilter(atlas_id="b").matches(e)
    assert EventFilter(types=("x", "added")).matches(e)
    assert not EventFilter(reasons=("capacity",)).matches(e)  # NULL reason never matches
    assert EventFilter(since=T0).matches(e) and not EventFilter(until=T0).matches(e)
    assert EventFilter(until=T0 + timedelta(seconds=1)).matches(e)
    assert EventFilter(text="PARIS").matches(e)
    assert not EventFilter(text="paris").matches(_event(content=None))
    assert ("content", Match.CONTAINS, "50%") in list(EventFilter(text="50%").active())


def test_evictions_keeps_other_conditions() -> None:
    flt = EventFilter(types=("added",), atlas_id="a", text="x").evictions()
    assert flt == EventFilter(types=("evicted",), atlas_id="a", text="x")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"types": "added"}, "types"),
        ({"reasons": "capacity"}, "reasons"),
        ({"since": datetime(2025, 1, 1)}, "since"),
        ({"until": datetime(2025, 1, 1)}, "until"),
        ({"since": T0, "until": T0 - timedelta(seconds=1)}, "since"),
    ],
)
def test_bad_filters_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError, match=field):
        EventFilter(**kwargs)  # type: ignore[arg-type]
