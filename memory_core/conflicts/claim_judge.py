"""The default judge: compares the claims of two texts (see ``claims.py``), offline.

Two claims contradict when they are about the same speaker at the same time and

- **a value changed**: both give a value of one type (an amount in the same unit, a date,
  a clock time, a proper name) for a related attribute, the values differ, and the newer
  text does not also state the old value (a refinement such as "Lyon, in Croix-Rousse");
- **polarity flipped**: one side denies ("never", "no", "don't") what the other asserts;
- **a word was swapped in the same frame**: "I passed my test" / "I failed my test";
- **the newer text says it corrects** ("sorry, wrong figure") something related.

Attributes are related when the claims share a word stem, a value, or words whose MiniLM
token vectors are close (``vectors.py``). Questions and requests state nothing: only the
values they presuppose ("my boss Daniel", "the 15,000 euro budget") are compared. Claims
about another person ("my brother lives ..."), the past ("as a kid", "used to"), or
additions ("also", "separately") are compatible with anything.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memory_core.conflicts import pair_model, vectors
from memory_core.conflicts.claims import STOP, Claim, Value, claims, stem
from memory_core.conflicts.slots import SLOT_WORDS, SlotReader, SlotReading
from memory_core.conflicts.verdict import Kind, Span, Verdict
from memory_core.embedding.base import Embedder
from memory_core.errors import ConfigError, InputError

DEFAULT_THRESHOLD = 0.5
"""Findings scoring at least this make a contradiction."""
DEFAULT_RELATED_SIMILARITY = 0.5
"""A given embedding cosine at or above this counts as "same topic" on its own."""
TOPIC_WITH_WORDS = 0.25
"""Embedding cosine at which two texts sharing a (near) word are on one topic ("I live in
Lyon" / "My brother lives in Ghent"); below it a shared word is a pun ("night shift" /
"the shift key")."""
WORD_SIMILARITY = 0.45
"""Two words whose token-vector cosine reaches this name the same thing or the same kind."""

UNIT_SIMILARITY = 0.6
"""Token-vector cosine at which two units are one ("kids" / "children")."""
SAME_KIND = 0.25
"""Token-vector cosine at which two words are values of one kind ("green" / "orange")."""
ALTERNATIVE = 0.35
"""Token-vector cosine at which two objects are alternatives ("coffee" / "tea")."""
SHORT_TEXT = 2
"""Pieces of a short text, at most."""
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

SLOT_CANDIDATE = 0.2
"""Texts' cosine from which the slot layer reads their pieces (a model run per new piece):
below it the claims are compared on their surface only. Opposite values of one attribute
sit above it ("married" / "single" 0.67, "bike to work" / "drive to the office" 0.56, but
"early riser, up by 5am" / "a total night owl" and "one older brother" / "only child" are
below 0.35)."""
PARAPHRASE = 0.8
"""Sentence cosine at which two claims of one slot say the same thing in other words.
MiniLM does not separate the two well: "vegetarian diet" / "meat-free diet" are 0.68 apart,
"married" / "single" 0.67, "grandmother is alive" / "passed away" 0.76."""

VALUE_SCORE = 0.8
SLOT_SCORE = 0.7
POLARITY_SCORE = 0.85
SWAP_SCORE = 0.7
CORRECTION_SCORE = 0.75
COMPATIBLE_SCORE = 0.1
LEARNED_SCORE = 0.75
"""Highest score of a contradiction only the learned model found (``pair_model``): below
the replay policy's 0.8 that resolves alone, so a reviewer settles it."""
UNRELATED_SCORE = 0.02

_WORD = re.compile(r"[^\W_]+(?:['’][a-z]+)?", re.IGNORECASE)
_USER_POSSESSIVE = re.compile(r"\b(?:the )?user['’]s\b", re.IGNORECASE)
_USER = re.compile(r"\b(?:the )?user\b", re.IGNORECASE)


def first_person(text: str) -> str:
    """An assistant-style memory ("User's son has ...", "The user is ...") as the user would
    say it, for the slot reader: its examples are in the first person."""
    return _USER.sub("I", _USER_POSSESSIVE.sub("my", text))


@dataclass(frozen=True, slots=True)
class _Finding:
    score: float
    kind: Kind
    reason: str
    spans: tuple[Span, ...]
    slot: bool = False
    """Found by the slot layer (one attribute typed by MiniLM, two values)."""


class ClaimJudge:
    """Offline contradiction judge over extracted claims; deterministic, under a millisecond a
    pair on average.

    Args:
        threshold: findings scoring at least this make a contradiction, in (0, 1].
        related_similarity: embedding cosine that alone makes two texts "same topic", in [-1, 1].
        embedder: sentence embedder that types claims by slot (``slots.py``) and gives the
            texts' cosine when the caller passes none; default the shipped MiniLM, loaded
            on first use. ``None`` with ``slots=False`` runs without a model.
        slots: compare claims by slot (one attribute, two values in other words).
        learned: let the learned pair model (``pair_model.py``) confirm or overrule the
            rules on candidate pairs (needs ``slots``).
    """

    __slots__ = (
        "_embedder",
        "_learned",
        "_reader",
        "_related_similarity",
        "_slots",
        "_threshold",
    )

    def __init__(
        self,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        related_similarity: float = DEFAULT_RELATED_SIMILARITY,
        embedder: Embedder | None = None,
        slots: bool = True,
        learned: bool = True,
    ) -> None:
        if not _number(threshold) or not 0.0 < threshold <= 1.0:
            raise ConfigError("threshold", threshold, "a number in (0, 1]")
        if not _number(related_similarity) or not -1.0 <= related_similarity <= 1.0:
            raise ConfigError("related_similarity", related_similarity, "a number in [-1, 1]")
        self._threshold = float(threshold)
        self._related_similarity = float(related_similarity)
        self._slots = bool(slots)
        self._learned = bool(learned) and self._slots
        self._embedder = embedder
        self._reader: SlotReader | None = None

    def _slot_reader(self) -> SlotReader:
        if self._reader is None:
            embedder = self._embedder
            if embedder is None:
                from memory_core.embedding.minilm import MiniLMEmbedder

                embedder = MiniLMEmbedder()
            self._reader = SlotReader(embedder)
        return self._reader

    def prime(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Hand the judge embeddings the caller already has (the atlas's, by ``model``), so a
        one-sentence memory costs no model run; a no-op without the slot layer or when
        ``model`` is not the slot reader's."""
        if not self._slots:
            return
        kept = [(t, v) for t, v in zip(texts, vectors, strict=True) if first_person(t) == t]
        if kept:
            self._slot_reader().prime(model, [t for t, _ in kept], np.stack([v for _, v in kept]))

    def readings(self, a: str, b: str) -> dict[str, SlotReading]:
        """Slot readings of both texts and of each of their claims, in one model batch."""
        pieces = (
            [a, b]
            + [a[c.start : c.end] for c in claims(a)]
            + [b[c.start : c.end] for c in claims(b)]
        )
        read = self._slot_reader().read([first_person(p) for p in pieces])
        return dict(zip(pieces, read, strict=True))

    @property
    def name(self) -> str:
        return "claims"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        """Judge ``a`` (usually the older memory) against ``b`` (usually the newer one)."""
        _check_text("a", a)
        _check_text("b", b)
        if similarity is not None and not _number(similarity):
            raise InputError("similarity", f"{similarity!r} is not a finite number")
        if similarity is not None and not -1.0 - 1e-6 <= similarity <= 1.0 + 1e-6:
            raise InputError("similarity", f"{similarity!r} is outside [-1, 1]")
        old, new = claims(a), claims(b)
        similarity, readings = self._read(a, b, similarity)
        rules, finding = self._rules(a, b, old, new, similarity, readings)
        if not (self._learned and readings) or a.strip() == b.strip():
            return rules
        model = pair_model.load()
        if model.embedder != self._slot_reader().embedder.name:
            return rules  # trained on another embedder's vectors (a test's fake)
        view = _view(a, b, old, new, readings)
        probability = model.probability(_pair_features(a, b, old, new, view, rules))
        short = len(old) == len(new) == 1
        verdict = _decide(a, b, view, rules, finding, probability, model.threshold, short=short)
        if verdict.is_contradiction and verdict.score < self._threshold:
            return replace(verdict, label="compatible", kind="none", spans=())
        return verdict

    def features(self, a: str, b: str, similarity: float | None = None) -> np.ndarray | None:
        """The learned model's input for a pair (``pair_model.features``), or None when the
        pair is no candidate (texts' cosine below :data:`SLOT_CANDIDATE`): for training."""
        old, new = claims(a), claims(b)
        similarity, readings = self._read(a, b, similarity)
        if not readings:
            return None
        rules, _ = self._rules(a, b, old, new, similarity, readings)
        return _pair_features(a, b, old, new, _view(a, b, old, new, readings), rules)

    def _read(
        self, a: str, b: str, similarity: float | None
    ) -> tuple[float | None, dict[str, SlotReading]]:
        """The texts' cosine (computed when not given) and, for a candidate pair, the slot
        readings of both texts and their pieces."""
        if self._slots and similarity is None:  # the texts' cosine, from their vectors
            whole = self._slot_reader().read([first_person(a), first_person(b)])
            similarity = float(whole[0].vector @ whole[1].vector)
        if self._slots and similarity is not None and similarity >= SLOT_CANDIDATE:
            return similarity, self.readings(a, b)  # the model reads pieces of candidates only
        return similarity, {}

    def _rules(
        self,
        a: str,
        b: str,
        old: tuple[Claim, ...],
        new: tuple[Claim, ...],
        similarity: float | None,
        readings: dict[str, SlotReading],
    ) -> tuple[Verdict, _Finding | None]:
        """What the claim rules alone say (the whole judge without the learned model), and
        their best finding, also one below the threshold."""
        # a correction cue covers the whole newer text when it is short ("I got the name
        # wrong. It's Helen."), only its own piece in a longer one
        corrects = len(new) <= SHORT_TEXT and any(c.corrects for c in new)
        # A repeated memory is a duplicate, whatever its pieces say to each other.
        findings = [] if a.strip() == b.strip() else _findings(a, b, old, new, corrects, readings)
        best = max(findings, key=lambda f: f.score, default=None)
        if best is not None and best.score >= self._threshold:
            return Verdict("contradiction", best.score, best.reason, best.kind, best.spans), best
        if similarity is None:  # no cosine given, no slot layer to compute one
            related = _related_texts(old, new)
        else:  # a word in common is a topic in common only when the sentences agree it is
            related = similarity >= self._related_similarity or (
                similarity >= TOPIC_WITH_WORDS and _related_texts(old, new)
            )
        if related:
            score = max(COMPATIBLE_SCORE, best.score if best else 0.0)
            return Verdict("compatible", score, "same topic, no claim contradicted"), best
        return Verdict("unrelated", UNRELATED_SCORE, "no shared topic"), best


def _view(
    a: str,
    b: str,
    old: tuple[Claim, ...],
    new: tuple[Claim, ...],
    readings: dict[str, SlotReading],
) -> pair_model.PairView:
    pieces_a = np.stack([readings[a[c.start : c.end]].vector for c in old])
    pieces_b = np.stack([readings[b[c.start : c.end]].vector for c in new])
    i, j = pair_model.closest(old, new, pieces_a, pieces_b)
    return pair_model.PairView(
        readings[a].vector, readings[b].vector, pieces_a[i], pieces_b[j], old[i], new[j]
    )


def _pair_features(
    a: str,
    b: str,
    old: tuple[Claim, ...],
    new: tuple[Claim, ...],
    view: pair_model.PairView,
    rules: Verdict,
) -> np.ndarray:
    return pair_model.features(
        view,
        rules,
        _other_people(view.old.subject, view.new.subject),
        any(not c.states for c in old),
        any(not c.states for c in new),
        (len(a.split()), len(b.split())),
    )


def _decide(
    a: str,
    b: str,
    view: pair_model.PairView,
    rules: Verdict,
    finding: _Finding | None,
    probability: float,
    threshold: float,
    *,
    short: bool,
) -> Verdict:
    """The verdict once the learned model has read the pair: it confirms or overrules the
    rules. Confirmed, the rules' finding keeps its score (the judge's threshold still
    applies); a contradiction only the model sees scores at most :data:`LEARNED_SCORE`, so a
    policy that resolves alone only above that sends it to a reviewer instead. The model
    alone speaks only for ``short`` texts (one piece each): in a longer turn
    the closest pieces are often chatter ("Train, definitely." / "I can work on the
    train."), and it reads one pair of pieces, not the turn."""
    said = f"pair model p={probability:.2f}"
    if probability < threshold:
        if rules.label != "contradiction" or (finding is not None and finding.slot):
            return rules  # a slot change names the slot and both values: a reviewer checks it
        return Verdict("compatible", COMPATIBLE_SCORE, f"{said}: no contradiction ({rules.reason})")
    if finding is not None:
        reason = f"{finding.reason} ({said})"
        return Verdict("contradiction", finding.score, reason, finding.kind, finding.spans)
    x, y = view.old, view.new
    if not short:
        return rules
    if _other_people(x.subject, y.subject) or x.past != y.past or not y.states or y.addition:
        return rules  # another subject, another time, a question or an addition: no change
    if _amounts(x) & _amounts(y) or _dates(x) & _dates(y):
        return rules  # the same amount or date said again, with more around it: a refinement
    spans = (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end))
    old_piece, new_piece = spans[0].text.strip(), spans[1].text.strip()
    return Verdict(
        "contradiction",
        max(DEFAULT_THRESHOLD, min(probability, LEARNED_SCORE)),
        f"{said}: '{_clip(old_piece)}' -> '{_clip(new_piece)}'",
        "value_change",
        spans,
    )


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


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
            found = _compare(a, b, x, y, corrects)
            if found is None and readings:
                found = _slot_change(a, b, x, y, readings)
            if found is not None:
                out.append(found)
    return out


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_text(field: str, text: object) -> None:
    if not isinstance(text, str):
        raise InputError(field, f"expected a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError(field, "is empty")


def _compare(a: str, b: str, x: Claim, y: Claim, corrects: bool) -> _Finding | None:
    """The contradiction between claim ``x`` of ``a`` and claim ``y`` of ``b``, if any."""
    if _other_people(x.subject, y.subject) or x.past != y.past or y.addition:
        return None
    related = _related(x, y)
    found = _value_change(a, b, x, y, related)
    if found is None and related and not (x.question or y.question):
        found = _polarity(a, b, x, y)
    if found is None and related and x.states and y.states:
        found = _swap(a, b, x, y)
    if found is None and not x.question:
        found = _other_kind(a, b, x, y)
    topical = x.words & y.words  # a word in common, not just a related one
    if (corrects or y.corrects) and topical and y.states and not x.question and found is None:
        found = _Finding(
            CORRECTION_SCORE,
            "correction",
            "the newer text corrects an earlier statement on the same topic",
            (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end)),
        )
    return found


def _other_people(a: str, b: str) -> bool:
    """Whether two claims' subjects (see ``claims._subject``) are different people."""
    if a == b or not a or not b:
        return a != b and (
            (a not in ("", "i") and not a.endswith("'s"))
            or (b not in ("", "i") and not b.endswith("'s"))
        )
    return True


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
            )
    return None


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
    if _other_people(x.subject, y.subject) or x.past != y.past or y.addition:
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
    return _Finding(
        SWAP_SCORE,
        "value_change",
        f"'{' '.join(old)}' replaced by '{' '.join(new)}' in the same statement",
        (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end)),
    )


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
