"""Whom and when a claim is about: subjects, the things they open on, and time marks read as
validity intervals (issue #27 point 1, session 14)."""

from __future__ import annotations

import math

import pytest

from memory_core.conflicts import ClaimJudge
from memory_core.conflicts.claim_judge import _other_value_types
from memory_core.conflicts.claim_terms import _apart, _other_people, _other_things, _other_times
from memory_core.conflicts.claims import NOW, PRESENT, SOME_PAST, Claim, claims


def _claim(text: str) -> Claim:
    (claim,) = claims(text)
    return claim


@pytest.fixture(scope="module")
def judge() -> ClaimJudge:
    return ClaimJudge(slots=False)


@pytest.mark.parametrize(
    ("text", "time"),
    [
        ("I lived in Manila until 2015.", (-math.inf, 2015.0)),
        ("I have lived in Toronto since 2016.", (2016.0, NOW)),
        ("User lived in Porto from 2009 to 2014.", (2009.0, 2014.0)),
        ("User lived in London throughout 2016 and 2017.", (2016.0, 2017.0)),
        ("I moved out of Berlin in 2017.", (2017.0, NOW)),  # an event: what it did still holds
        ("User was a teacher before 2018.", (-math.inf, 2017.0)),
        ("I used to live in Paris.", SOME_PAST),
        ("As a student, User regularly slept until noon.", SOME_PAST),
        ("back in uni i lived in halls", SOME_PAST),
        ("User was born and raised in Glasgow.", SOME_PAST),  # a childhood, as "grew up"
        ("I live in Leeds now.", PRESENT),
        ("I live in Leeds.", PRESENT),
        ("going outside for a quick cigarette, back in five", PRESENT),
        ("I broke up with Chris two years ago.", PRESENT),  # "ago" dates events too
    ],
)
def test_time_marks_are_read_as_intervals(text: str, time: tuple[float, float]) -> None:
    assert _claim(text).time == time


@pytest.mark.parametrize(
    ("a", "b", "apart"),
    [
        ("I lived in Manila until 2015.", "I have lived in Toronto since 2016.", True),
        ("I lived in Manila until 2015.", "I have lived in Toronto since 2012.", False),
        ("I've been vegetarian since 2010.", "I had chicken wings at the game in 2014.", False),
        ("As a kid I ate meat every day.", "I'm vegetarian.", True),
        ("As a kid I ate meat every day.", "I used to hate vegetables.", False),
        ("User lived in Porto from 2009 to 2014.", "User lives in Lisbon.", True),
        ("User grew up in Manchester.", "User was born and raised in Glasgow.", False),
    ],
)
def test_claims_meet_only_where_their_times_do(a: str, b: str, apart: bool) -> None:
    assert _other_times(_claim(a), _claim(b)) is apart


def test_marked_times_decide_a_change(judge: ClaimJudge) -> None:
    assert (
        judge.judge("I lived in Manila until 2015.", "I have lived in Toronto since 2016.").label
        != "contradiction"
    )
    assert (
        judge.judge("I lived in Manila until 2015.", "I have lived in Toronto since 2012.").label
        == "contradiction"
    )


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("User's brother lives in Austin.", "brother"),
        ("my brother's been a plumber his whole career", "brother"),  # "'s" is "has"
        ("my brother's flat is in Leeds", "brother's"),  # what is his
        ("the neighbour's got a massive dog that barks at miso", "neighbour"),
        ("Priya lives in Austin.", "priya"),
        ("hana lives on coffee, she has one between every patient", "she"),
        ("Invoice terms changed to 14 days.", ""),  # a capitalised noun, not a person
        ("my boss just turned 50", "boss"),  # people around the speaker, not only kin
        ("my boss is Daniel Okafor", "i"),  # the speaker's boss, named: the speaker's claim
        ("Priya Raman is my boss at work.", "i"),  # "my boss" is what is said of Priya
        ("User lives in Denver.", "i"),
        ("Switch the dog to the lamb food, the salmon upset her stomach.", ""),
    ],
)
def test_subjects(text: str, subject: str) -> None:
    assert _claim(text).subject == subject


@pytest.mark.parametrize(
    ("a", "b", "other"),
    [
        ("my older brother lives in Leeds", "my younger brother lives in York", True),
        ("my brother lives in Leeds", "my brother works in York", False),
        ("my car is a Civic", "my new car is a Golf", False),  # one side unqualified
        ("User's monthly budget is 400 dollars.", "User's grocery budget is 650 dollars.", False),
    ],
)
def test_things_told_apart_by_alternative_modifiers(a: str, b: str, other: bool) -> None:
    assert _other_things(_claim(a), _claim(b)) is other


def test_another_person_or_thing_is_no_change(judge: ClaimJudge) -> None:
    for a, b in [
        ("User lives in Denver.", "Priya lives in Austin."),
        ("my older brother lives in Leeds", "my younger brother lives in York"),
    ]:
        assert _apart(_claim(a), _claim(b))
        assert judge.judge(a, b).label != "contradiction"
    assert judge.judge("my brother lives in Leeds", "my brother lives in York").label == (
        "contradiction"
    )


@pytest.mark.parametrize(
    ("a", "b", "other"),
    [
        ("she", "", False),  # "jo runs her own studio" / "jo's a developer, she's ...": one
        ("she", "brother", False),  # "he" may be the brother the other claim names
        ("she", "priya", False),
        ("she", "i", True),  # but never the speaker
        ("brother", "", True),
        ("brother", "sister", True),
        ("i", "", False),
    ],
)
def test_someone_spoken_of_as_he_or_she_may_be_the_other_claims_person(
    a: str, b: str, other: bool
) -> None:
    assert _other_people(a, b) is other and _other_people(b, a) is other


def test_a_day_and_an_hour_are_two_attributes() -> None:
    day = _claim("User's flight to Rome is on 3 May.")
    hour = _claim("User's flight to Rome departs at 9:40.")
    assert _other_value_types(day, hour) and _other_value_types(hour, day)
    later = _claim("User's flight to Rome is on 5 May.")
    assert not _other_value_types(day, later)
    assert not _other_value_types(hour, _claim("User's flight to Rome departs at 10."))
