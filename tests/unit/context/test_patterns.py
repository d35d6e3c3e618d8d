"""Typed values by regular expressions: amounts, per-unit amounts, people, dates resolved
against the turn's time, times, durations, ids and e-mail addresses; bounded on junk."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_core.context.extract.patterns import _PLANS, NEEDS, PATTERNS, Value, find_values

AT = datetime(2024, 7, 21, 12, tzinfo=UTC).timestamp()  # a Sunday


def _one(text: str, kind: str) -> tuple[object, ...]:
    found = [v for v in find_values(text, AT) if v.kind == kind]
    assert len(found) == 1, found
    v = found[0]
    return v.text, v.number, v.unit, v.per, v.resolved


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a hotel under 180 EUR per night", ("180 EUR per night", 180.0, "EUR", "night", None)),
        ("no more than €1,200 a month", ("€1,200 a month", 1200.0, "EUR", "month", None)),
        ("about 200 bucks", ("200 bucks", 200.0, "USD", None, None)),
        ("it was £20", ("£20", 20.0, "GBP", None, None)),
        ("5000 yen tops", ("5000 yen", 5000.0, "JPY", None, None)),
        ("$49.99 each", ("$49.99", 49.99, "USD", None, None)),
        ("100 euros", ("100 euros", 100.0, "EUR", None, None)),
    ],
)
def test_money(text: str, expected: tuple[object, ...]) -> None:
    assert _one(text, "money") == expected


def test_amount_without_currency() -> None:
    assert _one("my budget is 2k", "amount")[:2] == ("2k", 2000.0)
    assert _one("rent at most 1200 a month", "amount")[1:4] == (1200.0, None, "month")


@pytest.mark.parametrize(
    ("text", "n"),
    [("a table for 4", 4), ("party of six", 6), ("two adults", 2), ("we are 3 people", 3)],
)
def test_people(text: str, n: int) -> None:
    assert _one(text, "people")[1] == n


def test_for_a_number_of_nights_is_not_people() -> None:
    kinds = [v.kind for v in find_values("for 3 nights", AT)]
    assert kinds == ["duration"]


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("tomorrow", "2024-07-22"),
        ("yesterday", "2024-07-20"),
        ("next friday", "2024-07-26"),
        ("in 3 days", "2024-07-24"),
        ("March 3rd 2025", "2025-03-03"),
        ("the 5th of May", "2024-05-05"),
        ("2024-08-01", "2024-08-01"),
    ],
)
def test_dates_resolved_against_the_turn(text: str, iso: str) -> None:
    assert _one(text, "date")[4] == iso


def test_relative_date_without_a_time_is_kept_unresolved() -> None:
    (value,) = find_values("tomorrow")
    assert value.kind == "date" and value.resolved is None


def test_times_durations_ids_emails() -> None:
    assert _one("at 7pm", "time")[4] == "19:00"
    assert _one("at 19:30", "time")[4] == "19:30"
    assert _one("for two weeks", "duration")[1:3] == (2.0, "week")
    assert _one("order ORD-20240721-889 please", "id")[:3] == ("ORD-20240721-889", None, "order")
    assert _one("booking ref BK12345", "id")[2] == "booking"
    assert _one("ticket number is 88123", "id")[:3] == ("88123", None, "ticket")
    assert _one("mail jo.smith+x@mail.example.co.uk", "email")[0] == "jo.smith+x@mail.example.co.uk"


def test_values_never_overlap() -> None:
    values = find_values("book 2 rooms for 4 people at 180 EUR per night on 2024-08-01", AT)
    spans = sorted((v.start, v.end) for v in values)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert {v.kind for v in values} >= {"people", "money", "date"}


@pytest.mark.parametrize(
    "junk", ["A1-" * 3000, "a." * 5000, "a@" * 5000, "1 " * 5000, "€" * 8000, "🙂" * 4000]
)
def test_junk_gives_no_values_it_should_not(junk: str) -> None:
    """Long runs of what a pattern half-matches (its cost is measured in
    ``benchmarks.context_bench``: every pattern is bounded, none backtracks over the text)."""
    values = find_values(junk[:8000], AT)
    assert all(len(v.text) <= 64 for v in values)


# texts where the skipped patterns would match once the needed character is put back
NEEDY = [
    "mail jo.smith+x@mail.example.co.uk",
    "order ORD-20240721-889, booking ref BK12345, ticket #88123, claim number ABCDEF",
    "a hotel under 180 EUR per night, about 2k, €1,200 a month, 45 per person",
    "on 2024-08-01, March 3rd, the 5th of May 2025, the 12th",
    "at 7pm or 19:30 for 4 people, a party of six, in 3 days, two weeks ago, tomorrow at noon",
    "٣ EUR per night on ٢٠٢٤-٠٨-٠١",  # Arabic-Indic digits: ``\d`` reads them too
]


@pytest.mark.parametrize("text", NEEDY)
def test_patterns_skipped_without_their_character_find_nothing(text: str) -> None:
    """A pattern listed under a character in ``NEEDS`` never matches a text without it (so
    skipping it changes nothing), and ``find_values`` equals running every pattern."""
    for needed, patterns in NEEDS:
        without = needed.sub(" ", text)
        assert all(not list(p.finditer(without)) for p in patterns), needed.pattern
    everything = [(p, make) for p, make in PATTERNS]
    for variant in (text, *(needed.sub(" ", text) for needed, _ in NEEDS)):
        assert find_values(variant, AT) == _every_pattern(variant, everything)


def test_patterns_needing_a_character_are_skipped_without_it() -> None:
    has_nothing = _PLANS[(False,) * len(NEEDS)]
    skipped = {p for _, patterns in NEEDS for p in patterns}
    assert [p for p, _ in has_nothing] == [p for p, _ in PATTERNS if p not in skipped]
    assert _PLANS[(True,) * len(NEEDS)] == PATTERNS


def _every_pattern(text: str, patterns: list[tuple[re.Pattern[str], Any]]) -> list[Value]:
    """``find_values`` before the skip: every pattern, in order, none overlapping."""
    now = datetime.fromtimestamp(AT, UTC)
    taken: list[tuple[int, int]] = []
    found: list[Value] = []
    for pattern, make in patterns:
        for match in pattern.finditer(text):
            if not match[0].strip() or any(match.start() < e and s < match.end() for s, e in taken):
                continue
            value = make(match, now)
            if value is not None:
                taken.append((match.start(), match.end()))
                found.append(value)
    return sorted(found, key=lambda v: v.start)


@pytest.mark.parametrize(
    ("text", "kind", "number", "unit"),
    [
        ("I'd like to increase it to thirty pounds", "money", 30.0, "GBP"),
        ("up to two thousand euros a month", "money", 2000.0, "EUR"),
        ("forty pounds a head", "money", 40.0, "GBP"),
        ("a thousand pounds tops", "money", 1000.0, "GBP"),
        ("one hundred and fifty dollars", "money", 150.0, "USD"),
        ("under ten grand", "amount", 10000.0, None),
        ("40 grand", "amount", 40000.0, None),
        ("under one fifty a night", "amount", 150.0, None),
        ("twenty five people", "people", 25.0, "people"),
    ],
)
def test_numbers_in_words(text: str, kind: str, number: float, unit: str | None) -> None:
    (value,) = find_values(text, AT)
    assert (value.kind, value.number, value.unit) == (kind, number, unit)


@pytest.mark.parametrize(
    ("text", "number"),
    [("twenty-five", 25.0), ("fourty three", 43.0), ("three fifty", 350.0), ("two thousand", 2000.0),
     ("a hundred and fifty", 150.0), ("eleven fifty", 1150.0), ("three four", None), ("twenty fifty", None)],
)  # fmt: skip
def test_number_words_are_read_as_one_number(text: str, number: float | None) -> None:
    from memory_core.context.extract.patterns import number_of

    assert number_of(text) == number


def test_a_small_number_word_per_unit_is_no_amount() -> None:
    assert find_values("two a day", AT) == []


def test_a_weekday_in_the_plural_is_a_date() -> None:
    (value,) = find_values("move to Tuesdays", AT)
    assert (value.kind, value.text, value.resolved) == ("date", "Tuesdays", None)
