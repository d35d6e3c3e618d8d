"""How the claim rules (``claim_rules.py``) compare the parts of two claims.

Typed values are the same or differ (an amount in one unit, a date, a name and its longer
form); words are related when they share a stem or their MiniLM token vectors are close
(``vectors.py``); a claim names single-valued attributes (:data:`SINGLE_VALUED`); two
subjects are or are not one person. Also the spans and words a finding quotes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from memory_core.conflicts import vectors
from memory_core.conflicts.claims import SOMEONE, Claim, Value, stem
from memory_core.conflicts.slots import SLOT_WORDS
from memory_core.conflicts.verdict import Span

WORD_SIMILARITY = 0.45
"""Two words whose token-vector cosine reaches this name the same thing or the same kind."""
UNIT_SIMILARITY = 0.6
"""Token-vector cosine at which two units are one ("kids" / "children")."""
ALTERNATIVE = 0.35
"""Token-vector cosine at which two objects are alternatives ("coffee" / "tea")."""
SHORT_CLAIM = 10
"""Words of a plain one-fact statement, at most."""
SINGLE_VALUED = (
    "live home city address moved settled",
    "name called named",
    "job employer work",
    "manager boss report",
    "favourite favorite",
    "age old",
    "budget limit cap price cost spend money",
    "deadline birthday",
    "phone email",
)
"""Attributes a person has one value of at a time, each as a few words that name it; a
claim is about one when it has a word equal or near (token vectors) to one of them."""
_WORD = re.compile(r"[^\W_]+(?:['’][a-z]+)?", re.IGNORECASE)


def _other_people(a: str, b: str) -> bool:
    """Whether two claims' subjects (see ``claims._subject``) are different people. Someone
    spoken of only as "he" / "she" (``claims.SOMEONE``) may be whoever the other claim is
    about ("jo runs her own tattoo studio" / "jo's a software developer, she's never
    tattooed anyone": the lower-case name is not read), but not the speaker."""
    if SOMEONE in (a, b) and a != b:
        return "i" in (a, b)
    if a == b or not a or not b:
        return a != b and (
            (a not in ("", "i") and not a.endswith("'s"))
            or (b not in ("", "i") and not b.endswith("'s"))
        )
    return True


def _apart(x: Claim, y: Claim) -> bool:
    """Whether two claims are about different subjects, things or times: then nothing
    one says can contradict the other."""
    return _other_people(x.subject, y.subject) or _other_things(x, y) or _other_times(x, y)


def _other_things(x: Claim, y: Claim) -> bool:
    """Whether two claims open on one kind of thing told apart by alternative modifiers:
    "my older brother" / "my younger brother", "the morning shift" / "the evening shift"
    (the same last words, before them words of one kind, token-vector cosine
    :data:`ALTERNATIVE`); "my car" / "my new car" is one car, "User's monthly budget" /
    "User's grocery budget" one budget (the modifiers are not alternatives)."""
    left, right = list(x.holder), list(y.holder)
    if not left or left[-1:] != right[-1:]:
        return False
    while left and right and left[-1] == right[-1]:
        left.pop()
        right.pop()
    if not left or not right or set(left) & set(right):
        return False
    return bool((vectors.cross(left, right) >= ALTERNATIVE).any())


def _other_times(x: Claim, y: Claim) -> bool:
    """Whether two claims hold at times that do not meet (``claims._time``): "lived in
    Manila until 2015" / "has lived in Toronto since 2016", "as a kid" / now."""
    return x.time[1] < y.time[0] or y.time[1] < x.time[0]


_HEAD_WORDS = [(i, h) for i, names in enumerate(SINGLE_VALUED) for h in names.split()]


@functools.lru_cache(maxsize=16384)
def _heads(word: str) -> frozenset[int]:
    """Which :data:`SINGLE_VALUED` attributes ``word`` names."""
    close = vectors.cross([word], [h for _, h in _HEAD_WORDS])[0] >= WORD_SIMILARITY
    return frozenset(
        i for (i, h), hit in zip(_HEAD_WORDS, close, strict=True) if hit or stem(h) == word
    )


def _value_attribute(value: Value) -> frozenset[int]:
    """The single-valued attributes named around ``value`` (its clause and neighbours)."""
    return frozenset().union(*(_heads(w) for w in value.clause | value.context))


def _attribute(claim: Claim) -> frozenset[int]:
    """The single-valued attributes ``claim`` speaks of (see :data:`SINGLE_VALUED`)."""
    return frozenset().union(*(_heads(w) for w in claim.words))


def _one_name(claim: Claim) -> bool:
    return sum(1 for v in claim.values if v.type == "name") == 1


def _single_place(claim: Claim) -> bool:
    return sum(1 for v in claim.values if v.place) == 1


def _qualified(old: Value, new: Value, x: Claim, y: Claim) -> bool:
    """Each value has a qualifier the other claim lacks: two attributes of one thing
    ("the gym opens at 6" / "the gym closes at 10").

    Only for plain statements: in a long chatty piece, words near a value are often chatter.
    """
    if x.length > SHORT_CLAIM or y.length > SHORT_CLAIM:
        return False
    return bool(old.context - _near(old.context, y.words)) and bool(
        new.context - _near(new.context, x.words)
    )


def _differ(old: Value, new: Value) -> bool:
    if old.type == "number":
        same_unit = old.unit == new.unit or (
            bool(old.unit and new.unit)
            and vectors.similarity(old.unit, new.unit) >= UNIT_SIMILARITY
        )
        return old.key != new.key and same_unit
    if old.type == "date":
        return _dates_differ(old.key, new.key)
    if old.type == "name":
        return not _same_name(old.key, new.key)
    return old.key != new.key


def _same_name(a: str, b: str) -> bool:
    """ "Priya" is "Priya Raman"; "Postgres" is "PostgreSQL" (a shared start of 6 letters)."""
    left, right = set(a.split()), set(b.split())
    return left <= right or right <= left or (a[:6] == b[:6] and min(len(a), len(b)) >= 6)


def _same(a: Value, b: Value) -> bool:
    return a.type == b.type and not _differ(a, b)


def _dates_differ(a: str, b: str) -> bool:
    if ("-" in a) != ("-" in b):
        return False  # a weekday against a calendar date: not comparable
    if "-" not in a:
        return a != b
    (month_a, day_a), (month_b, day_b) = a.split("-"), b.split("-")
    return bool(month_a and month_b and month_a != month_b) or bool(
        day_a and day_b and day_a != day_b
    )


@functools.lru_cache(maxsize=64)
def _slot_words(slot: str) -> frozenset[str]:
    return frozenset(stem(w) for w in SLOT_WORDS.get(slot, "").split())


def _comparable_amounts(x: Claim, y: Claim, naming: frozenset[str]) -> bool:
    """Two claims' amounts are of one thing: one has a unit or both claims are short, and
    they are not each qualified by a word the other lacks, other than the words naming the
    slot ("trip budget 3000" / "hotels under 150 a night"; not "34 years old" / "turned 29")."""
    olds = [v for v in x.values if v.type in ("number", "time")]
    news = [v for v in y.values if v.type in ("number", "time")]
    short = x.length <= SHORT_CLAIM and y.length <= SHORT_CLAIM
    if not short and not any(v.unit or v.type == "time" for v in olds + news):
        return False
    own_old = frozenset().union(*(v.context for v in olds)) - naming
    own_new = frozenset().union(*(v.context for v in news)) - naming
    return not (own_old - _near(own_old, y.words) and own_new - _near(own_new, x.words))


def _amounts(claim: Claim) -> frozenset[str]:
    """The claim's amounts and clock times, as keys."""
    return frozenset(v.key for v in claim.values if v.type in ("number", "time") and not v.negated)


def _dates(claim: Claim) -> frozenset[str]:
    return frozenset(v.key for v in claim.values if v.type == "date" and not v.negated)


def _value_terms(claim: Claim) -> frozenset[str]:
    """What a claim says in words (its content words; amounts are compared apart)."""
    return claim.words - {"user"}  # "user": the speaker of assistant-style memories


def _in_order(text: str, claim: Claim, terms: frozenset[str]) -> str:
    """``terms`` as they appear in the claim's text, for a one-line reason."""
    piece = text[claim.start : claim.end]
    seen = [w for w in _WORD.findall(piece) if stem(w.lower()) in terms or w.lower() in terms]
    return " ".join(dict.fromkeys(seen)) or " ".join(sorted(terms))


def _alternative(denier: Claim, other: Claim, hit: frozenset[str]) -> bool:
    """``other`` has, where ``denier`` negates a word, a different one of its kind."""
    missing = denier.denied - hit - {denier.denied_verb}
    extra = other.words - denier.words
    return any(vectors.similarity(o, e) >= ALTERNATIVE for o in missing for e in extra)


def _related(x: Claim, y: Claim) -> bool:
    """Whether two claims are about the same attribute: shared stems, values or near words."""
    if x.words & y.words:
        return True
    if {(v.type, v.key) for v in x.values} & {(v.type, v.key) for v in y.values}:
        return True
    return bool(_soft_overlap(x.words, y.words))


def _related_texts(old: Iterable[Claim], new: Iterable[Claim]) -> bool:
    words_a = frozenset().union(*(c.words | _value_words(c) for c in old))
    words_b = frozenset().union(*(c.words | _value_words(c) for c in new))
    return bool(_soft_overlap(words_a, words_b))


def _name_words(claim: Claim) -> frozenset[str]:
    return frozenset(w for v in claim.values if v.type == "name" for w in v.key.split())


def _value_words(claim: Claim) -> frozenset[str]:
    return frozenset(v.key for v in claim.values if v.type == "name")


def _soft_overlap(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """Words of ``a`` that ``b`` contains or has a close vector neighbour of."""
    return _near(a, b, WORD_SIMILARITY)


def _near(words: frozenset[str], others: frozenset[str], at: float = 0.3) -> frozenset[str]:
    """Words of ``words`` in ``others`` or at least ``at`` close to one of them."""
    exact = words & others
    rest = sorted(words - exact)
    if not rest or not others:
        return exact
    close = vectors.cross(rest, sorted(others)).max(axis=1) >= at
    return exact | frozenset(w for w, hit in zip(rest, close, strict=True) if hit)


def _span(side: str, text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    return Span("a" if side == "a" else "b", start, end, text[start:end])
