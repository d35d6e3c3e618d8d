"""Typed values found by regular expressions before any parse: amounts with a currency,
amounts per unit, counts of people, dates and times, durations, ids and e-mail addresses.

Patterns run in a fixed order and a later one never takes characters an earlier one
claimed, so "in 3 days" is a date, not a duration, and "180 EUR per night" one amount.
Number words ("two", "six", "a dozen") are a closed class and spelled out here; nothing
else is a word list. Dates are resolved against the turn's time when one is given.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONEY = "money"
AMOUNT = "amount"
PEOPLE = "people"
DATE = "date"
TIME = "time"
DURATION = "duration"
IDENTIFIER = "id"
EMAIL = "email"
KINDS = (MONEY, AMOUNT, PEOPLE, DATE, TIME, DURATION, IDENTIFIER, EMAIL)

NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "dozen": 12,
    "a couple of": 2, "couple of": 2, "a dozen": 12, "both of us": 2,
}  # fmt: skip
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
"""Tens as people write them ("fourty" is a common spelling)."""
SCALES = {"hundred": 100, "thousand": 1_000}
CURRENCIES = {
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "bucks": "USD",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "quid": "GBP",
    "¥": "JPY", "yen": "JPY", "jpy": "JPY", "chf": "CHF", "francs": "CHF",
    "cny": "CNY", "rmb": "CNY", "yuan": "CNY", "cad": "CAD", "aud": "AUD",
}  # fmt: skip
MULTIPLIERS = {"k": 1_000, "m": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000, "grand": 1_000}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
)  # fmt: skip
UNIT_SECONDS = {
    "minute": 60, "min": 60, "hour": 3600, "hr": 3600, "day": 86400, "night": 86400,
    "week": 7 * 86400, "month": 30 * 86400, "year": 365 * 86400,
}  # fmt: skip

_NUM = r"\d+(?:[.,]\d{3})*(?:\.\d+)?"
_ONES = "|".join(
    sorted((w for w in NUMBER_WORDS if " " not in w and w not in ("a", "an", "dozen")), key=len)[
        ::-1
    ]
)
_TENS = "|".join(sorted(TENS, key=len)[::-1])
_UNDER_100 = rf"(?:(?:{_TENS})(?:[\s-](?:{_ONES}))?|{_ONES})"
_WORD_NUM = (
    r"(?:a couple of|couple of|a dozen|both of us|dozen|"
    rf"an?\s+(?:hundred|thousand)(?:\s+(?:and\s+)?{_UNDER_100}(?!\s+(?:hundred|thousand)))?|"
    rf"{_UNDER_100}(?:\s+(?:hundred|thousand)(?:\s+(?:and\s+)?{_UNDER_100}(?!\s+(?:hundred|thousand)))?"
    rf"|\s+(?:{_TENS})(?:[\s-](?:{_ONES}))?)?)"
)
"""A number in words: "six", "twenty-five", "fourty three", "two thousand", "one hundred and
fifty", and the spoken price "three fifty" (a unit word then a tens word: 350)."""
_CUR_WORD = (
    r"(?:EUR|euros?|USD|dollars?|bucks|GBP|pounds?|quid|yen|JPY|CHF|francs|CNY|RMB|yuan|CAD|AUD)"
)
_CUR_SYM = r"[€$£¥]"
_MULT = r"(?:\s?(?:k|K|m|mn|bn)\b)"
_PER = r"(?:\s*(?:per|a|an|/|each)\s*(?P<per>night|day|month|week|person|head|hour|year|ticket|room|kg|guest))"
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"  # "Tuesdays": a weekly day
_DUR_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?)"
_PEOPLE_NOUN = (
    r"(?:people|persons?|guests?|adults?|kids|children|travell?ers|passengers|pax|of us|diners)"
)


@dataclass(frozen=True, slots=True)
class Value:
    """One typed value in a text, with where it stands (character offsets)."""

    kind: str
    text: str
    start: int
    end: int
    number: float | None = None
    unit: str | None = None
    """Currency code, time unit, id kind ("order"), or None."""
    per: str | None = None
    """The unit an amount is per ("night"), or None."""
    resolved: str | None = None
    """A date or time as ISO text, resolved against the turn's time when one was given."""


_Maker = Callable[[re.Match[str], datetime | None], Value | None]


def number_of(text: str) -> float | None:
    """A number written in digits ("1,200") or as a word ("eight", "a dozen"), else None."""
    return _number(text)


def _number(text: str) -> float | None:
    clean = text.strip().lower()
    if clean in NUMBER_WORDS:
        return float(NUMBER_WORDS[clean])
    clean = clean.replace(",", "")
    try:
        return float(clean)
    except ValueError:
        return _words_number(clean.replace("-", " ").split())


def _words_number(words: list[str]) -> float | None:
    """The number a run of number words says: "twenty five" 25, "two thousand" 2000, "one
    hundred and fifty" 150, "three fifty" 350 (a price said as hundreds and tens); None when
    a word is no number word or two units follow each other ("three four")."""
    total, current, last = 0, 0, ""
    for word in words:
        if (word == "and" and last == "scale") or (word in ("a", "an") and not last):
            continue  # "one hundred and fifty"; "a thousand" is one thousand
        if word in NUMBER_WORDS and word not in ("a", "an", "dozen"):
            if last in ("one", "ones"):
                return None
            current, last = current + NUMBER_WORDS[word], "ones" if last else "one"
        elif word in TENS:
            if last == "tens" or (last == "ones" and current % 100 >= 10):
                return None
            spoken_hundreds = last == "one" and 0 < current < 20  # "three fifty"
            current = current * 100 + TENS[word] if spoken_hundreds else current + TENS[word]
            last = "tens"
        elif word in SCALES:
            if word == "hundred":
                current, last = max(current, 1) * 100, "scale"
            else:
                total, current, last = total + max(current, 1) * 1_000, 0, "scale"
        else:
            return None
    return float(total + current) if last else None


def _money(m: re.Match[str], _: datetime | None) -> Value | None:
    number = _number(m["num"])
    if number is None:
        return None
    mult = (m["mult"] or "").strip().lower()
    number *= MULTIPLIERS.get(mult, 1)
    cur = m["cur"] if "cur" in m.re.groupindex else None
    unit = CURRENCIES.get((cur or "").lower()) if cur else None
    per = m["per"].lower() if m["per"] else None
    kind = MONEY if unit else AMOUNT
    return Value(kind, m[0], m.start(), m.end(), number, unit, per)


def _money_words(m: re.Match[str]) -> Value | None:
    """An amount in words with a currency ("thirty pounds", "two thousand euros"), in
    thousands ("ten grand", "40 grand"), or per unit ("one fifty a night"): a number word
    under twenty per unit ("two a day") is a count, not an amount."""
    text = m["num"] or m["num2"]
    number = _number(text)
    if number is None:
        return None
    grand = bool(m["mult2"])
    if grand:
        number *= MULTIPLIERS["grand"]
    cur = m["cur"] if "cur" in m.re.groupindex else None
    unit = CURRENCIES.get((cur or "").lower()) if cur else None
    if unit is None and not grand and number < 20:
        return None
    per = m["per"].lower() if m["per"] else None
    return Value(MONEY if unit else AMOUNT, m[0], m.start(), m.end(), number, unit, per)


def _people(m: re.Match[str], _: datetime | None) -> Value | None:
    number = _number(m["n"])
    if number is None or number <= 0 or number > 500:
        return None
    return Value(PEOPLE, m[0], m.start(), m.end(), number, "people")


def _duration(m: re.Match[str], _: datetime | None) -> Value | None:
    number = _number(m["n"])
    if number is None:
        return None
    unit = m["unit"].lower().rstrip("s")
    unit = {"min": "minute", "hr": "hour", "minutes": "minute"}.get(unit, unit)
    return Value(DURATION, m[0], m.start(), m.end(), number, unit)


def _time(m: re.Match[str], _: datetime | None) -> Value | None:
    word = (m["word"] or "").lower()
    if word:
        hour, minute = (12, 0) if word == "noon" else (0, 0)
    else:
        hour, minute = int(m["h"]), int(m["m"] or 0)
        half = (m["ampm"] or "").lower().replace(".", "")
        if half == "pm" and hour < 12:
            hour += 12
        elif half == "am" and hour == 12:
            hour = 0
        if hour > 23 or minute > 59:
            return None
    return Value(TIME, m[0], m.start(), m.end(), None, None, None, f"{hour:02d}:{minute:02d}")


def _month_number(text: str) -> int:
    key = text.lower().rstrip(".")[:3]
    return next(i for i, name in enumerate(MONTHS, 1) if name.startswith(key))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _absolute_date(m: re.Match[str], now: datetime | None) -> Value | None:
    if m["iso"]:
        found = _safe_date(int(m["y"]), int(m["mo"]), int(m["d"]))
    elif m["day3"]:  # "the 9th": a day of the turn's month, unresolved without a time
        if now is None:
            return Value(DATE, m[0], m.start(), m.end())
        found = _safe_date(now.year, now.month, int(m["day3"]))
    else:
        month = _month_number(m["month"] or m["month2"])
        day = int(m["day"] or m["day2"])
        year_text = m["year"] or m["year2"]
        year = int(year_text) if year_text else (now.year if now else None)
        found = _safe_date(year, month, day) if year else None
        if found is None and year is None:
            return Value(
                DATE, m[0], m.start(), m.end(), None, None, None, f"--{month:02d}-{day:02d}"
            )
    if found is None:
        return None
    return Value(DATE, m[0], m.start(), m.end(), None, None, None, found.isoformat())


def _relative_date(m: re.Match[str], now: datetime | None) -> Value | None:
    text = m[0].lower()
    resolved = _resolve_relative(text, now.date()) if now else None
    return Value(DATE, m[0], m.start(), m.end(), None, None, None, resolved)


def _resolve_relative(text: str, today: date) -> str | None:
    words = text.split()
    simple = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}
    if text in simple:
        return (today + timedelta(days=simple[text])).isoformat()
    if text == "the day after tomorrow":
        return (today + timedelta(days=2)).isoformat()
    if text == "the day before yesterday":
        return (today - timedelta(days=2)).isoformat()
    if words[0] in ("in", "within") and len(words) == 3:
        n = _number(words[1])
        seconds = UNIT_SECONDS.get(words[2].rstrip("s"))
        if n is not None and seconds:
            return (today + timedelta(seconds=n * seconds)).isoformat()
        return None
    if words[-1] == "ago" and len(words) == 3:
        n = _number(words[0])
        seconds = UNIT_SECONDS.get(words[1].rstrip("s"))
        if n is not None and seconds:
            return (today - timedelta(seconds=n * seconds)).isoformat()
        return None
    last = words[-1]
    if last in WEEKDAYS:
        ahead = (WEEKDAYS.index(last) - today.weekday()) % 7
        if words[0] == "next":
            ahead = ahead or 7
        elif words[0] == "last":
            ahead = ahead - 7 if ahead else -7
        return (today + timedelta(days=ahead)).isoformat()
    step = {"next": 1, "last": -1, "this": 0}.get(words[0], 0)
    if last in ("week", "weekend"):
        base = today + timedelta(weeks=step)
        start = base - timedelta(days=base.weekday())
        return (start + timedelta(days=5 if last == "weekend" else 0)).isoformat()
    if last == "month":
        month = today.month - 1 + step
        return date(today.year + month // 12, month % 12 + 1, 1).isoformat()[:7]
    if last == "year":
        return str(today.year + step)
    return None


def _email(m: re.Match[str], _: datetime | None) -> Value | None:
    return Value(EMAIL, m[0], m.start(), m.end(), None, None)


def _identifier(m: re.Match[str], _: datetime | None) -> Value | None:
    code = m["code"]
    if not any(c.isdigit() for c in code) or len(code) < 4:
        return None
    kind = (m["kind"] or "").lower() or _kind_from_prefix(code)
    return Value(IDENTIFIER, code, m.start("code"), m.end("code"), None, kind or None)


def _kind_from_prefix(code: str) -> str:
    letters = re.match(r"[A-Za-z]+", code)
    return letters[0].lower() if letters else ""


_I = re.IGNORECASE
PATTERNS: tuple[tuple[re.Pattern[str], _Maker], ...] = (
    (re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b"), _email),
    (
        re.compile(
            r"(?:\b(?P<kind>order|booking|reservation|ticket|claim|case|tracking|invoice|"
            r"confirmation|reference|ref|account|policy|flight|parcel|package|shipment)"
            r"(?:\s+(?:number|no\.?|id|code|ref(?:erence)?|#))?\s*(?:is\s+|:\s*|#\s*)?)?"
            r"(?P<code>\b(?=[A-Za-z0-9-]{0,40}\d)[A-Z][A-Za-z0-9]{0,15}(?:-[A-Za-z0-9]{1,15}){1,4}\b(?!-)"
            r"|\b[A-Z]{2,5}\d{4,20}\b|(?<=#)\d{4,20}\b)",
            re.UNICODE,
        ),
        _identifier,
    ),
    (
        re.compile(
            r"(?:\b(?P<kind>order|booking|reservation|ticket|claim|case|tracking|invoice|"
            r"confirmation|reference|account|policy)\s+(?:number|no\.?|id|code|#)\s*"
            r"(?:is\s+|:\s*|#\s*)?)(?P<code>[A-Za-z0-9-]{4,30})\b",
            _I,
        ),
        _identifier,
    ),
    (
        re.compile(
            rf"(?P<cur>{_CUR_SYM})\s?(?P<num>{_NUM}){_MULT.replace('(?:', '(?P<mult>', 1)}?{_PER}?",
        ),
        _money,
    ),
    (
        re.compile(
            rf"\b(?P<num>{_NUM}){_MULT.replace('(?:', '(?P<mult>', 1)}?\s?"
            rf"(?P<cur>{_CUR_SYM}|\b{_CUR_WORD}\b){_PER}?",
            _I,
        ),
        _money,
    ),
    (re.compile(rf"\b(?P<num>\d+(?:\.\d+)?)(?P<mult>[kK])\b{_PER}?"), _money),
    (re.compile(rf"\b(?P<num>{_NUM})(?P<mult>){_PER}\b", _I), _money),
    (
        re.compile(
            rf"(?:\b(?P<num>{_WORD_NUM})\s+(?P<cur>\b{_CUR_WORD}\b)"
            rf"|\b(?P<num2>{_NUM}|{_WORD_NUM})\s*(?P<mult2>grand)\b){_PER}?",
            _I,
        ),
        lambda m, now: _money_words(m),
    ),
    (
        re.compile(rf"\b(?P<num>{_WORD_NUM})(?P<num2>)(?P<mult2>){_PER}\b", _I),
        lambda m, now: _money_words(m),
    ),
    (
        re.compile(
            r"(?P<iso>\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})\b)"
            rf"|\b(?P<month>{_MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{{4}})\b)?"
            rf"|\b(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month2>{_MONTH})(?![a-z])(?:,?\s+(?P<year2>\d{{4}})\b)?"
            rf"|\bthe\s+(?P<day3>\d{{1,2}})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{_MONTH}(?![a-z]))",
            _I,
        ),
        _absolute_date,
    ),
    (
        re.compile(
            r"\b(?:the day (?:after tomorrow|before yesterday)|today|tonight|tomorrow|yesterday"
            rf"|(?:next|this|last|on)\s+(?:{_WEEKDAY}|week(?:end)?|month|year)"
            rf"|(?:in|within)\s+(?:\d+|{_WORD_NUM})\s+{_DUR_UNIT}"
            rf"|(?:\d+|{_WORD_NUM})\s+{_DUR_UNIT}\s+ago|{_WEEKDAY})\b",
            _I,
        ),
        _relative_date,
    ),
    (
        re.compile(
            r"\b(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?\s?(?P<ampm>[ap]\.?m\.?)(?=\W|$)"
            r"|\b(?P<h2>[01]?\d|2[0-3]):(?P<m2>[0-5]\d)\b|\b(?P<word>noon|midnight)\b",
            _I,
        ),
        lambda m, now: _time(m, now) if m["h2"] is None else _clock(m),
    ),
    (
        re.compile(
            rf"\b(?:(?:party|group|table)\s+(?:of|for)\s+(?P<n>\d+|{_WORD_NUM})\b"
            rf"|(?P<n2>\d+|{_WORD_NUM})\s+{_PEOPLE_NOUN}\b"
            rf"|\b(?:we(?:'re|\s+are)|there(?:'ll|\s+will)\s+be)\s+(?:now\s+|only\s+|just\s+)?"
            rf"(?:up\s+to\s+)?(?P<n4>\d+|{_WORD_NUM})\b(?!\s*(?:{_DUR_UNIT}|%|[.,:]\d|{_CUR_SYM}|{_CUR_WORD}|[a-z]{{3,}}(?<!now)))"
            rf"|for\s+(?P<n3>\d+|{_WORD_NUM})\b(?!\s*(?:{_DUR_UNIT}|%|[.,:]\d|{_CUR_SYM}|{_CUR_WORD}|[a-z])))",
            _I,
        ),
        lambda m, now: _people_any(m),
    ),
    (
        re.compile(rf"\b(?P<n>\d+(?:\.\d+)?|{_WORD_NUM})[\s-]+(?P<unit>{_DUR_UNIT})\b", _I),
        _duration,
    ),
)

NEEDS: tuple[tuple[re.Pattern[str], tuple[re.Pattern[str], ...]], ...] = (
    (re.compile("@"), (PATTERNS[0][0],)),
    (re.compile(r"\d"), tuple(PATTERNS[i][0] for i in (1, 3, 4, 5, 6, 9))),
)
"""Characters every match of some patterns contains (``\\d`` any Unicode decimal digit, as
the patterns read it): e-mail addresses an "@"; ids, amounts and calendar dates a digit.
A text without the character skips those patterns, the same values found: 99 % of LoCoMo's
chat turns have no digit."""
_PLANS = {
    has: tuple(
        entry
        for entry in PATTERNS
        if not any(
            entry[0] in patterns for (_, patterns), ok in zip(NEEDS, has, strict=True) if not ok
        )
    )
    for has in itertools.product((False, True), repeat=len(NEEDS))
}
"""The patterns to run for each combination of ``NEEDS``'s characters present."""


def _clock(m: re.Match[str]) -> Value | None:
    hour, minute = int(m["h2"]), int(m["m2"])
    return Value(TIME, m[0], m.start(), m.end(), None, None, None, f"{hour:02d}:{minute:02d}")


def _people_any(m: re.Match[str]) -> Value | None:
    n = m["n"] or m["n2"] or m["n3"] or m["n4"]
    number = _number(n)
    if number is None or number <= 1 or number > 500:  # "one of us" is no party
        return None
    return Value(PEOPLE, m[0], m.start(), m.end(), number, "people")


def find_values(text: str, at: float | None = None) -> list[Value]:
    """Every typed value in ``text``, in text order, none overlapping another.

    ``at``: the turn's time (epoch seconds, UTC); relative dates are resolved against it.
    """
    now = datetime.fromtimestamp(at, UTC) if at is not None else None
    taken: list[tuple[int, int]] = []
    found: list[Value] = []
    has = tuple(needed.search(text) is not None for needed, _ in NEEDS)
    for pattern, make in _PLANS[has]:  # those that cannot match here left out
        for match in _matches(pattern, text):
            if any(match.start() < e and s < match.end() for s, e in taken):
                continue
            value = make(match, now)
            if value is None:
                continue
            taken.append((match.start(), match.end()))
            found.append(value)
    return sorted(found, key=lambda v: v.start)


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    return (m for m in pattern.finditer(text) if m[0].strip())
