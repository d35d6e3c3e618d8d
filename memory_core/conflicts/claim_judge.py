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

This module runs the rules (``claim_rules.py``, over ``claim_terms.py``), lets the learned
pair model (``pair_model.py``) confirm or overrule them, and checks the input: the first
look. Where the pair model is unsure, the cross-encoder (``pair_encoder.py``) decides: the
second look, which the write path runs off the add (``second_look.py``) and ``judge`` runs
at once.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memory_core.conflicts import pair_encoder, pair_model
from memory_core.conflicts.claim_rules import _Finding, _findings
from memory_core.conflicts.claim_terms import (
    _amounts,
    _apart,
    _dates,
    _other_people,
    _related_texts,
    _span,
)
from memory_core.conflicts.claims import Claim, claims
from memory_core.conflicts.slots import SlotReader, SlotReading
from memory_core.conflicts.verdict import BaseJudge, FirstLook, Verdict, judged_now
from memory_core.embedding.base import Embedder
from memory_core.embedding.recent import RecentCache
from memory_core.errors import ConfigError, InputError

DEFAULT_THRESHOLD = 0.5
"""Findings scoring at least this make a contradiction."""
DEFAULT_RELATED_SIMILARITY = 0.5
"""A given embedding cosine at or above this counts as "same topic" on its own."""
TOPIC_WITH_WORDS = 0.25
"""Embedding cosine at which two texts sharing a (near) word are on one topic ("I live in
Lyon" / "My brother lives in Ghent"); below it a shared word is a pun ("night shift" /
"the shift key")."""
SHORT_TEXT = 2
"""Pieces of a short text, at most."""
SLOT_CANDIDATE = 0.2
"""Texts' cosine from which the slot layer reads their pieces (a model run per new piece):
below it the claims are compared on their surface only. Opposite values of one attribute
sit above it ("married" / "single" 0.67, "bike to work" / "drive to the office" 0.56, but
"early riser, up by 5am" / "a total night owl" and "one older brother" / "only child" are
below 0.35)."""
COMPATIBLE_SCORE = 0.1
LEARNED_SCORE = 0.75
"""Highest score of a contradiction only the learned model found (``pair_model``): below
the replay policy's 0.8 that resolves alone, so a reviewer settles it."""
UNRELATED_SCORE = 0.02
WARM_UP_PAIR = ("I live in Oslo and work as a nurse.", "I moved to Bergen last year.")
"""What ``ClaimJudge.warm`` judges to load its models: claims, a slot, a place, a time."""
SURE = 0.8
"""Pair-model probability from which its contradiction is sure. Below it the cross-encoder
(``pair_encoder.py``) decides instead (the second look) wherever its answer could change
the label (:meth:`_Candidate.open`): it costs a MiniLM run per pair, the pair model a dot
product, so it reads only the pairs the pair model leaves open. 0.8 was set before any
measurement and not tuned."""
SURE_NO = 0.2
"""Pair-model probability under which its "no" is sure for texts the rules have nothing to
compare in (no finding, attribute word, value or slot in common: :attr:`_Candidate.
anchored`); where they have, the cross-encoder still decides. Until session 13 the "no"
was sure for every pair; the cross-encoder, the better reader on pairs neither was trained
on (fifth pass), found 7 changes among those on the independent dev and scenario sets at
one false alarm ("big meat lover" / "being vegan for 5 years", "User is retired ..." /
"User works full time as an accountant ..."). Opened for every pair, it also found one in
trip-approval's chatter ("Understood, ..." / "Thanks, that's everything for now."), as it
did on fragments of task chat (eighth pass) (docs/conflicts.md, session 13)."""
CROSSED_PAIRS = 4096
"""Cross-encoder probabilities kept, by pair (a scan judges each pair from both sides)."""
PairScorer = Callable[[str, str, np.ndarray], float]
"""A learned half: the probability that ``a`` and ``b`` contradict, given the pair model's
features of the pair."""
_USER_POSSESSIVE = re.compile(r"\b(?:the )?user['’]s\b", re.IGNORECASE)
_USER = re.compile(r"\b(?:the )?user\b", re.IGNORECASE)


def first_person(text: str) -> str:
    """An assistant-style memory ("User's son has ...", "The user is ...") as the user would
    say it, for the slot reader: its examples are in the first person."""
    return _USER.sub("I", _USER_POSSESSIVE.sub("my", text))


class ClaimJudge(BaseJudge):
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
        scorer: the learned half's probability that a candidate pair ``(a, b, features)``
            contradicts, in place of the pair model's (the features are its input).
        cross_encoder: where the pair model is not sure (:data:`SURE`), let the
            cross-encoder (``pair_encoder.py``) decide instead (needs ``learned``): the
            second look. It gains recall at the same precision on held-out pairs
            (docs/conflicts.md, fifth pass); a MiniLM run per open pair is too slow for a
            write, so the guard runs it off the add (``second_look.py``, sixth pass).
            ``False`` gives the pair model's answer on every pair.
    """

    __slots__ = (
        "_cross",
        "_cross_lock",
        "_crossed",
        "_crossed_count",
        "_embedder",
        "_learned",
        "_reader",
        "_related_similarity",
        "_scorer",
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
        scorer: PairScorer | None = None,
        cross_encoder: bool = True,
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
        self._scorer = scorer
        self._cross = bool(cross_encoder) and self._learned
        self._crossed: RecentCache[float] = RecentCache(CROSSED_PAIRS)
        self._cross_lock = threading.Lock()
        self._crossed_count = 0

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
        pieces = _pair_pieces(a, b)
        read = self._slot_reader().read([first_person(p) for p in pieces])
        return dict(zip(pieces, read, strict=True))

    def warm(self, texts: Sequence[str] = ()) -> None:
        """Pay first-use costs now rather than on the first pairs judged: the slot examples'
        vectors, the word vectors and the learned model load (a pair of the judge's own is
        judged), and ``texts`` (the stored memories a restarted guard will compare writes
        with) and their claims are read in one model batch. A no-op without the slot layer."""
        if not self._slots:
            return
        self.judge(*WARM_UP_PAIR)
        self._read_all([piece for text in texts for piece in (text, *_pieces(text))])

    def read_ahead(self, pairs: Sequence[tuple[str, str, float]]) -> None:
        """Read in one model batch what a first look at each ``(a, b, similarity)`` will
        read (the texts and claims of each candidate pair): a write judged against several
        stored memories costs one model call, not one per pair."""
        if not self._slots:
            return
        self._read_all(
            [
                piece
                for a, b, similarity in pairs
                if similarity >= SLOT_CANDIDATE
                for piece in _pair_pieces(a, b)
            ]
        )

    def reads_model(self, a: str, b: str, similarity: float | None = None) -> bool:
        """Whether a first look at the pair would run the slot layer's model: a candidate
        pair with a text or claim not read yet (the guard's writes leave such a pair to
        their worker, ``detector.py``)."""
        if not self._slots or (similarity is not None and similarity < SLOT_CANDIDATE):
            return False
        pieces = [first_person(p) for p in _pair_pieces(a, b)]
        return similarity is None or bool(self._slot_reader().unread(pieces))

    def _read_all(self, pieces: list[str]) -> None:
        if pieces:
            self._slot_reader().read([first_person(p) for p in pieces])

    @property
    def name(self) -> str:
        return "claims"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        """Judge ``a`` (usually the older memory) against ``b`` (usually the newer one): the
        first look and, when it leaves the pair open, the second look at once."""
        return judged_now(self, a, b, similarity)

    def first_look(
        self,
        a: str,
        b: str,
        similarity: float | None = None,
        *,
        context: tuple[str, str] | None = None,
    ) -> FirstLook:
        """The rules and the pair model (under a millisecond a pair once the texts are
        read); open when the pair model is unsure and the cross-encoder is on (see
        :meth:`_Candidate.open`).

        With ``context`` (``a`` and ``b`` are sentences read out of those texts, older and
        newer; ``long_texts.py``), a contradiction the pair model found alone between
        sentences the rules have nothing to compare in (:meth:`_Candidate.unanchored`: no
        finding, attribute or slot in common) is open however sure the pair model is, and
        its second look reads the sentences and the whole texts, the lower probability
        deciding: the fragments lost what their turns said around them, and on fragments
        of task chat both learned halves speak with confidence ("... the whole trip has to
        stay under 5,000 euros ..." / "I don't want to depend on the U-Bahn ...", pair
        model 0.81; "... / For the hotel I want something I can walk to the fair from.",
        cross-encoder 0.97 on the sentences, 0.00 on the two turns: docs/conflicts.md,
        eighth pass)."""
        _check_text("a", a)
        _check_text("b", b)
        if similarity is not None and not _number(similarity):
            raise InputError("similarity", f"{similarity!r} is not a finite number")
        if similarity is not None and not -1.0 - 1e-6 <= similarity <= 1.0 + 1e-6:
            raise InputError("similarity", f"{similarity!r} is outside [-1, 1]")
        rules, candidate = self._candidate(a, b, similarity)
        if candidate is None:
            return FirstLook(a, b, rules)
        p = candidate.probability
        verdict = self._held(candidate.decide(a, b, p, f"pair model p={p:.2f}"))
        in_context = context is not None and candidate.unanchored(verdict)
        if not (self._crosses() and (in_context or candidate.open(a, b))):
            return FirstLook(a, b, verdict)

        def second(p: float) -> Verdict:
            return self._held(candidate.decide(a, b, p, f"second look: cross-encoder p={p:.2f}"))

        read = ((a, b), context) if in_context and context is not None else ((a, b),)
        return FirstLook(a, b, verdict, open=True, state=_Settle(second, read))

    def second_look(self, looks: Sequence[FirstLook]) -> list[Verdict]:
        """The verdict of each look: the cross-encoder's on the open ones (the lowest of
        its probabilities on the pairs a look reads, :class:`_Settle`), read in batches
        (one MiniLM run per pair in each order, about 15 ms of CPU a pair on one thread),
        the first look's on the others. Thread-safe: the guard runs it on a worker."""
        settles = [look.state if look.open else None for look in looks]
        pairs = [pair for settle in settles if settle is not None for pair in settle.reads]
        found = iter(self._cross_probabilities(pairs))
        return [
            look.verdict
            if settle is None
            else settle.verdict(min(next(found) for _ in settle.reads))
            for look, settle in zip(looks, settles, strict=True)
        ]

    @property
    def second_looks(self) -> int:
        """Pairs the cross-encoder has read so far (a pair judged again is read once)."""
        return self._crossed_count

    def _held(self, verdict: Verdict) -> Verdict:
        """``verdict``, a contradiction scoring under the judge's threshold made compatible."""
        if verdict.is_contradiction and verdict.score < self._threshold:
            return replace(verdict, label="compatible", kind="none", spans=(), untyped=False)
        return verdict

    def _candidate(
        self, a: str, b: str, similarity: float | None
    ) -> tuple[Verdict, _Candidate | None]:
        """What the rules say of a pair and, when it reaches the learned half, what that
        reads of it (None for a pair below the cosine gate, a repeated text, no model)."""
        old, new = claims(a), claims(b)
        similarity, readings = self._read(a, b, similarity)
        rules, finding = self._rules(a, b, old, new, similarity, readings)
        if not (self._learned and readings) or a.strip() == b.strip():
            return rules, None
        model = pair_model.load()
        if model.embedder != self._slot_reader().embedder.name:
            return rules, None  # trained on another embedder's vectors (a test's fake)
        view = _view(a, b, old, new, readings)
        x = _pair_features(a, b, old, new, view, rules)
        probability = model.probability(x) if self._scorer is None else self._scorer(a, b, x)
        short = len(old) == len(new) == 1
        anchored = finding is not None or _shares_attribute(a, b, old, new, readings)
        return rules, _Candidate(
            rules, finding, view, probability, model.threshold, short, anchored
        )

    def features(self, a: str, b: str, similarity: float | None = None) -> np.ndarray | None:
        """The learned model's input for a pair (``pair_model.features``), or None when the
        pair is no candidate (texts' cosine below :data:`SLOT_CANDIDATE`): for training."""
        old, new = claims(a), claims(b)
        similarity, readings = self._read(a, b, similarity)
        if not readings:
            return None
        rules, _ = self._rules(a, b, old, new, similarity, readings)
        return _pair_features(a, b, old, new, _view(a, b, old, new, readings), rules)

    def _crosses(self) -> bool:
        """The cross-encoder decides open pairs: on, no scorer given, and the slot layer
        reads with the MiniLM its band was chosen with (not a test's fake)."""
        return (
            self._cross
            and self._scorer is None
            and self._slot_reader().embedder.name == pair_encoder.EMBEDDER
        )

    def _cross_probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The cross-encoder's probability for each pair, the ones not seen before read in
        one batch (the texts as the user would say them, as in training). It reads both
        orders, so a pair judged from either side is read once."""
        if not pairs:
            return []
        said = [(first_person(a), first_person(b)) for a, b in pairs]
        keys = ["\x1f".join(sorted(pair)) for pair in said]
        with self._cross_lock:  # two threads never read the same pair twice
            missing = self._crossed.missing(keys)
            if missing:
                todo = [said[keys.index(k)] for k in missing]
                found = pair_encoder.load().probabilities(todo)
                self._crossed_count += len(todo)
                self._crossed.put_many(zip(missing, map(float, found), strict=True))
            held = self._crossed.get_many(keys)
        return [
            p if p is not None else float(pair_encoder.load().probabilities([pair])[0])
            for pair, p in zip(said, held, strict=True)
        ]

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
            found = Verdict("contradiction", best.score, best.reason, best.kind, best.spans)
            return replace(found, untyped=best.untyped), best
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


@dataclass(frozen=True, slots=True)
class _Settle:
    """What an open look's second look reads (``reads``: the pair itself, and for a sentence
    pair without an anchor also the texts it came from) and the verdict for the lowest of
    the cross-encoder's probabilities on them."""

    verdict: Callable[[float], Verdict]
    reads: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A pair as the learned half reads it: the rules' verdict and best finding, the
    closest pieces, the pair model's probability and decision threshold, one piece each."""

    rules: Verdict
    finding: _Finding | None
    view: pair_model.PairView
    probability: float
    threshold: float
    short: bool
    anchored: bool
    """The rules have something to compare: a finding (of any score), a shared attribute
    word or value, or one slot (:func:`_shares_attribute`)."""

    def decide(self, a: str, b: str, probability: float, said: str) -> Verdict:
        """The verdict with the learned half's ``probability`` (see :func:`_decide`)."""
        return _decide(
            a, b, self.view, self.rules, self.finding, probability, self.threshold, said,
            short=self.short,
        )  # fmt: skip

    def open(self, a: str, b: str) -> bool:
        """The cross-encoder has a say: the pair model is not sure (:data:`SURE`,
        :data:`SURE_NO`) and the verdict would differ between a sure "yes" and a sure "no".

        What its low probability may overturn, then: a contradiction the pair model found
        alone, and the rules' findings on words (a denial of a shared word, a swapped word,
        one value of a kind, a correction cue), which another sense or another thing can
        match. Not a slot change (it stands against both learned halves: ``_decide``), and
        not a typed value change the pair model confirmed (``_Finding.valued``: two
        amounts, dates, times or names of one type in one frame, and the model that reads
        the rules' findings agrees): the cross-encoder reads the text alone, and on pairs
        it was never trained on it gave 0.00-0.11 to every such change that was real
        (docs/conflicts.md, session 13). A value change the pair model doubts stays open:
        the second look may still confirm it. A long turn where the rules found nothing is
        not opened either."""
        if self.probability > SURE or (self.probability < SURE_NO and not self.anchored):
            return False
        finding = self.finding
        if finding is not None and finding.valued and self.probability >= self.threshold:
            return False
        return self.decide(a, b, 1.0, "").label != self.decide(a, b, 0.0, "").label

    def unanchored(self, verdict: Verdict) -> bool:
        """``verdict`` is a contradiction the learned half found alone, between texts the
        rules have nothing to compare in (no finding, attribute or slot in common)."""
        return verdict.is_contradiction and not self.anchored


def _shares_attribute(
    a: str,
    b: str,
    old: tuple[Claim, ...],
    new: tuple[Claim, ...],
    readings: dict[str, SlotReading],
) -> bool:
    """Whether the texts have an attribute in common the rules could compare: a word stem,
    a value or a near word (``claim_terms._related_texts``), or one slot (``slots.py``) read
    for both texts or for a claim of each."""
    if _related_texts(old, new):
        return True
    slots_a = {readings[p].slot for p in (a, *(a[c.start : c.end] for c in old))}
    slots_b = {readings[p].slot for p in (b, *(b[c.start : c.end] for c in new))}
    return bool((slots_a & slots_b) - {""})


def _pieces(text: str) -> list[str]:
    """The text of each claim of ``text``: what the slot layer reads besides the whole."""
    return [text[c.start : c.end] for c in claims(text)]


def _pair_pieces(a: str, b: str) -> list[str]:
    """What the slot layer reads to judge a pair: both texts and each of their claims."""
    return [a, b, *_pieces(a), *_pieces(b)]


def _view(
    a: str,
    b: str,
    old: tuple[Claim, ...],
    new: tuple[Claim, ...],
    readings: dict[str, SlotReading],
) -> pair_model.PairView:
    pieces_a = np.stack([readings[a[c.start : c.end]].vector for c in old])
    pieces_b = np.stack([readings[b[c.start : c.end]].vector for c in new])
    i, j = pair_model.closest(pieces_a, pieces_b)
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
    said: str,
    *,
    short: bool,
) -> Verdict:
    """The verdict once the learned model has read the pair: it confirms or overrules the
    rules. Confirmed, the rules' finding keeps its score (the judge's threshold still
    applies); a contradiction only the model sees scores at most :data:`LEARNED_SCORE`, so a
    policy that resolves alone only above that sends it to a reviewer instead. The model
    alone speaks only for ``short`` texts (one piece each): in a longer turn
    the closest pieces are often chatter ("Train, definitely." / "I can work on the
    train."), and it reads one pair of pieces, not the turn. ``said`` names the model that
    gave ``probability``, for the reason."""
    if probability < threshold:
        if rules.label != "contradiction" or (finding is not None and finding.slot):
            return rules  # a slot change names the slot and both values: a reviewer checks it
        return Verdict("compatible", COMPATIBLE_SCORE, f"{said}: no contradiction ({rules.reason})")
    if finding is not None:
        reason = f"{finding.reason} ({said})"
        found = Verdict("contradiction", finding.score, reason, finding.kind, finding.spans)
        return replace(found, untyped=finding.untyped)
    x, y = view.old, view.new
    if not short:
        return rules
    if _apart(x, y) or not y.states or y.addition:
        return rules  # another subject, another time, a question or an addition: no change
    if _amounts(x) & _amounts(y) or _dates(x) & _dates(y):
        return rules  # the same amount or date said again, with more around it: a refinement
    if _other_value_types(x, y):
        return rules  # "is on 3 May" / "departs at 9:40": the day and the hour, two attributes
    spans = (_span("a", a, x.start, x.end), _span("b", b, y.start, y.end))
    old_piece, new_piece = spans[0].text.strip(), spans[1].text.strip()
    return Verdict(
        "contradiction",
        max(DEFAULT_THRESHOLD, min(probability, LEARNED_SCORE)),
        f"{said}: '{_clip(old_piece)}' -> '{_clip(new_piece)}'",
        "value_change",
        spans,
        untyped=True,
    )


def _other_value_types(x: Claim, y: Claim) -> bool:
    """Whether one claim gives only a date and the other only a clock time that it does not:
    the day and the hour of one thing are two attributes ("User's flight is on 3 May" /
    "User's flight departs at 9:40"). Amounts are not told apart from either this way: "at
    10" is a clock time as often as an amount."""
    left = {(v.type, v.key) for v in x.values}
    right = {(v.type, v.key) for v in y.values}
    kinds = {t for t, _ in left - right}, {t for t, _ in right - left}
    return kinds in (({"date"}, {"time"}), ({"time"}, {"date"}))


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_text(field: str, text: object) -> None:
    if not isinstance(text, str):
        raise InputError(field, f"expected a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError(field, "is empty")
