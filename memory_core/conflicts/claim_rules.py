"""The claim judge's rules: whether claim ``x`` of an older text and claim ``y`` of a newer
one contradict, and how strongly.

Each rule is one way two claims of one speaker at one time cannot both hold: a typed value
changed, the polarity flipped, a word was swapped in the same frame, a one-value attribute
got another value of its kind, a slot (typed by MiniLM, ``slots.py``) got another value, or
the newer text says it corrects the older. Two names are values of one attribute only when
the two claims read the same slot where the slot layer read them: a name has no unit, only
its frame says what it is the value of. ``claim_judge.py`` turns the best finding into a
verdict; ``claim_terms.py`` compares the claims' words and values.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from memory_core.conflicts import vectors
from memory_core.conflicts.claim_terms import (
    _WORD,
    SHORT_CLAIM,
    _alternative,
    _amounts,
    _apart,
    _attribute,
    _comparable_amounts,
    _differ,
    _heads,
    _in_order,
    _name_words,
    _one_name,
    _qualified,
    _related,
    _same,
    _single_place,
    _slot_words,
    _soft_overlap,
    _span,
    _value_attribute,
    _value_terms,
    _value_words,
)
from memory_core.conflicts.claims import STOP, Claim, stem
from memory_core.conflicts.slots import SlotReading
from memory_core.conflicts.verdict import Kind, Span

SAME_KIND = 0.25
"""Token-vector cosine at which two words are values of one kind ("green" / "orange")."""
PARAPHRASE = 0.8
"""Sentence cosine at which two claims of one slot say the same thing in other words.
MiniLM does not separate the two well: "vegetarian diet" / "meat-free diet" are 0.68 apart,
"married" / "single" 0.67, "grandmother is alive" / "passed away" 0.76."""
VALUE_SCORE = 0.8
SLOT_SCORE = 0.7
POLARITY_SCORE = 0.85
SWAP_SCORE = 0.7
CORRECTION_SCORE = 0.75


@dataclass(frozen=True, slots=True)
class _Finding:
    score: float
    kind: Kind
    reason: str
    spans: tuple[Span, ...]
    slot: bool = False
    """Found by the slot layer (one attribute typed by MiniLM, two values)."""
    untyped: bool = False
    """Names no typed value, slot, denial or correction: one word swapped in a frame."""
    valued: bool = False
    """Read two typed values (amounts, dates, clock times, names) of one type in one frame,
    one on each side (the value-change rule): what the second look may not overturn once
    the pair model confirmed it (``claim_judge._Candidate.open``)."""
    named: bool = False
    """The two values are names: nothing but their frame says which attribute they fill."""


def _findings(
    a: str,
    b: str,
    old: tuple[Claim, ...],
    new: tuple[Claim, ...],
    corrects: bool,
    readings: dict[str, SlotReading],
) -> list[_Finding]:
    out = []
    for x in old:
        for y in new:
            slots = _slots(a, b, x, y, readings)
            found = _compare(a, b, x, y, corrects, slots)
            if found is None and readings:
                found = _slot_change(a, b, x, y, readings)
            if found is not None:
                out.append(found)
    return out


def _slots(
    a: str, b: str, x: Claim, y: Claim, readings: dict[str, SlotReading]
) -> tuple[str, str] | None:
    """The slots (``slots.py``) claims ``x`` and ``y`` read when both state something and
    the slot layer read them (candidate pairs); None otherwise. A question's reading is of
    what it asks ("which gym near my place in Porto?"), not of the value it presupposes."""
    if not readings or not (x.states and y.states):
        return None
    return readings[a[x.start : x.end]].slot, readings[b[y.start : y.end]].slot


def _compare(
    a: str, b: str, x: Claim, y: Claim, corrects: bool, slots: tuple[str, str] | None = None
) -> _Finding | None:
    """The contradiction between claim ``x`` of ``a`` and claim ``y`` of ``b``, if any;
    ``slots``: what the two claims read by slot, when known (:func:`_slots`)."""
    if _apart(x, y) or y.addition:
        return None
    related = _related(x, y)
    found = _value_change(a, b, x, y, related)
    if found is not None and found.named and slots is not None and slots[0] != slots[1]:
        # the claims read different slots ("I live in ..." / "the tram in ... was packed"):
        # a name said in passing, not another value of the first claim's attribute
        found = None
    if found is None and related and not (x.question or y.question):
        found = _polarity(a, b, x, y)
    if found is None and related and x.states and y.states:
        found = _swap(a, b, x, y)
    if found is None and not x.question:
        found = _other_kind(a, b, x, y)
    topical = x.words & y.words  # a word in common, not just a related one
    # a correction that names what it takes back ("..., not from Munich") corrects a text
    # that said it, not any older one sharing a word ("Zurich")
    names_old = not y.denied or bool(y.denied & x.words)
    if (
        (corrects or y.corrects)
        and topical
        and names_old
        and y.states
        and not x.question
        and found is None
    ):
        found = _Finding(
            CORRECTION_SCORE,
            "correction",
            "the newer text corrects an earlier statement on the same topic",
            (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end)),
        )
    return found


def _value_change(a: str, b: str, x: Claim, y: Claim, related: bool) -> _Finding | None:
    for old in x.values:
        if old.negated or any(_same(old, v) and not v.negated for v in y.values):
            continue  # the newer piece states the old value too: a refinement
        if old.type == "name" and all(stem(w) in y.words for w in old.key.split()):
            continue  # the newer piece states the old value too: a refinement
        for new in y.values:
            if new.negated or new.type != old.type or not _differ(old, new):
                continue
            if any(_same(old_other, new) for old_other in x.values):
                continue
            short = x.length <= SHORT_CLAIM and y.length <= SHORT_CLAIM
            if old.type == "name":  # names abound in chat: short only with one name a side
                short = short and not (x.question or y.question) and _one_name(x) and _one_name(y)
            if old.type == "number" and not (old.unit or new.unit):
                short = False  # bare numbers ("9 to 12" / "three hours") need their clause
            exclusive = (
                (old.place and old.place == new.place and _single_place(x) and _single_place(y))
                or bool(_value_attribute(old) & _value_attribute(new))
                or (
                    short
                    and any(_same(p, q) and p.type != old.type for p in x.values for q in y.values)
                )
            )
            if not exclusive and (not related or _qualified(old, new, x, y)):
                continue
            if old.type == "name":  # the same word before both: "to Munich" / "to Zurich"
                same_slot = bool(old.before) and old.before == new.before
            else:
                same_slot = bool(old.clause & new.clause)
            if not (exclusive or short or same_slot):
                continue  # two values in long related pieces, but not of the same attribute
            if old.type != "name" and old.names - new.names and new.names - old.names:
                continue  # amounts of different named things ("Munich to Zurich" / "to Amsterdam")
            return _Finding(
                VALUE_SCORE,
                "value_change",
                f"{old.type} changed: '{a[old.start : old.end]}' -> '{b[new.start : new.end]}'",
                (_span("a", a, old.start, old.end), _span("b", b, new.start, new.end)),
                valued=True,
                named=old.type == "name",
            )
    return None


def _polarity(a: str, b: str, x: Claim, y: Claim) -> _Finding | None:
    names_x, names_y = _value_words(x), _value_words(y)
    if names_x and names_y and not names_x & names_y:
        return None
    for denier, other, side in ((x, y, "a"), (y, x, "b")):
        if not denier.denied or other.denied:
            continue
        if denier.dislikes and not other.likes:
            continue
        hit = _soft_overlap(denier.denied, other.words | _value_words(other))
        if hit == {denier.denied_verb} or _alternative(denier, other, hit):
            continue  # "never drink coffee" / "drink tea": another object of the same verb
        if side == "a" and hit <= _name_words(denier) | _name_words(other):
            continue  # "not from Munich" then "Munich to Zurich is ...": a mention, not a claim
        if hit:
            spans = (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end))
            said = "denies" if side == "b" else "asserts"
            return _Finding(
                POLARITY_SCORE,
                "negation",
                f"the newer text {said} what the older one {'asserts' if side == 'b' else 'denies'}"
                f" ({', '.join(sorted(hit))})",
                spans,
            )
    return None


def _other_kind(a: str, b: str, x: Claim, y: Claim) -> _Finding | None:
    """A one-value attribute given two values of one kind ("favourite colour" green / orange)."""
    if x.length > SHORT_CLAIM or y.length > SHORT_CLAIM or not _attribute(x) & _attribute(y):
        return None  # in a long piece, other words are mostly chatter
    left = [w for w in x.words - y.words if not _heads(w)]
    right = [w for w in y.words - x.words if not _heads(w)]
    pairs = [(u, v) for u in left for v in right if vectors.similarity(u, v) >= SAME_KIND]
    if not pairs:
        return None
    old, new = max(pairs, key=lambda p: vectors.similarity(*p))
    return _Finding(
        SWAP_SCORE,
        "value_change",
        f"one value at a time: '{old}' then '{new}'",
        (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end)),
    )


def _slot_change(
    a: str, b: str, x: Claim, y: Claim, readings: dict[str, SlotReading]
) -> _Finding | None:
    """One attribute (typed by MiniLM, ``slots.py``), two values in other words: "barista at
    a café" / "head chef at a restaurant", "early riser" / "night owl", "married" / "single".

    Only between affirmative statements of one subject at one time (a denial is the
    polarity check's, and "I don't eat meat" restates "I'm vegetarian"). One shared word
    that does not name the attribute ("Denver" in "I live in Denver" / "I've lived in
    Denver for years", not "live"), one shared typed value or a paraphrase (sentence cosine
    :data:`PARAPHRASE`) makes the claims agree. Token vectors do not decide here: those of
    antonyms and of numbers are close ("introverted" / "extroverted", "34" / "29").
    """
    if _apart(x, y) or y.addition:
        return None
    if x.denied or y.denied:
        return None
    rx, ry = readings[a[x.start : x.end]], readings[b[y.start : y.end]]
    if not rx.slot or rx.slot != ry.slot or float(rx.vector @ ry.vector) >= PARAPHRASE:
        return None
    left, right = _amounts(x), _amounts(y)
    if left and right:  # amounts decide: "$28 an hour at the warehouse" / "$19/hr at the warehouse"
        if left & right or not _comparable_amounts(x, y, _slot_words(rx.slot)):
            return None
    elif not (x.states and y.states):
        return None  # a question presupposes only its amounts
    else:  # words decide ("early riser, up by 5am" / "night owl"), amounts left aside
        if {(v.type, v.key) for v in x.values} & {(v.type, v.key) for v in y.values}:
            return None
        naming = _slot_words(rx.slot) | {x.subject.removesuffix("'s"), y.subject.removesuffix("'s")}
        left, right = _value_terms(x), _value_terms(y)
        if not left or not right or (left & right) - naming:
            return None  # a value word in common: the same value, said again or refined
        left, right = left - right, right - left  # what each side gives that the other does not
        if not left or not right:
            return None
    return _Finding(
        SLOT_SCORE,
        "value_change",
        f"{rx.slot} changed: '{_in_order(a, x, left)}' -> '{_in_order(b, y, right)}'",
        (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end)),
        slot=True,
    )


def _same_value_said_again(
    a: str, b: str, x: Claim, y: Claim, old: list[str], new: list[str]
) -> bool:
    """Whether the replaced words are only the claims' typed values and those are the same
    values ("at 6pm" / "at 18:00"): a value written another way, not a swap."""
    if {(v.type, v.key) for v in x.values} != {(v.type, v.key) for v in y.values}:
        return False
    in_a = {w.lower() for v in x.values for w in _WORD.findall(a[v.start : v.end])}
    in_b = {w.lower() for v in y.values for w in _WORD.findall(b[v.start : v.end])}
    return set(old) <= in_a and set(new) <= in_b


def _swap(a: str, b: str, x: Claim, y: Claim) -> _Finding | None:
    """The same frame with one word or short phrase replaced."""
    left = [w.lower() for w in _WORD.findall(a[x.start : x.end])]
    right = [w.lower() for w in _WORD.findall(b[y.start : y.end])]
    ops = [op for op in difflib.SequenceMatcher(a=left, b=right).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    old, new = left[i1:i2], right[j1:j2]
    kept = [w for w in left[:i1] + left[i2:] if w not in STOP]
    if not kept or len(old) > 2 or len(new) > 2:
        return None
    if any(w in STOP for w in old + new):
        return None
    if _same_value_said_again(a, b, x, y, old, new):
        return None
    return _Finding(
        SWAP_SCORE,
        "value_change",
        f"'{' '.join(old)}' replaced by '{' '.join(new)}' in the same statement",
        (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end)),
        untyped=True,
    )
