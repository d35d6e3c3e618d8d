"""The default judge: offline, deterministic rules over regex features (no model, no LLM).

Four rule families each look for one kind of evidence and return a scored finding:
polarity (negation flips and antonym preferences), reversed "prefer X over Y", the same
attribute with a different value, and explicit corrections. The strongest finding at or
above the threshold makes the verdict a contradiction; otherwise topical overlap (shared
content words, shared topic classes, or a given embedding similarity) separates
compatible from unrelated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cached_property

from memory_core.conflicts import lexicon as lx
from memory_core.conflicts.features import Features, Value, clauses, extract, sentences, stem
from memory_core.conflicts.judge import Kind, Side, Span, Verdict
from memory_core.errors import ConfigError, InputError

DEFAULT_THRESHOLD = 0.5
"""Findings scoring at least this make a contradiction."""
DEFAULT_RELATED_SIMILARITY = 0.5
"""An embedding cosine at or above this counts as "same topic" on its own."""

POLARITY_SCORE = 0.85
VALUE_SCORE = 0.8
NAME_SCORE = 0.75
SLOT_SCORE = 0.7
CUE_BONUS = 0.1
CORRECTION_SCORE = 0.75
REJECTION_SCORE = 0.95
"""A newer text rejecting, by name, a word of the older one for good ("from now on text me
instead of emailing"); a passing "instead of" ("snacks instead of work") is a plain correction."""
LOOSE_CORRECTION_SCORE = 0.6
"""A correction about a merely related topic (same topic class, no shared word)."""
COMPATIBLE_SCORE = 0.1
UNRELATED_SCORE = 0.02


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule's evidence for a contradiction."""

    score: float
    kind: Kind
    reason: str
    spans: tuple[Span, ...]


class _Pair:
    """Both sides' features plus the set algebra every rule needs."""

    def __init__(self, a: Features, b: Features, related_by_similarity: bool) -> None:
        self.a = a
        self.b = b
        self.shared = a.topic & b.topic
        self.a_extra = a.topic - b.topic
        self.b_extra = b.topic - a.topic
        self.related_by_similarity = related_by_similarity

    @cached_property
    def topical(self) -> frozenset[str]:
        """Shared words minus units and times of day, which say little about the topic."""
        return self.shared - _GENERIC_KEYS

    @cached_property
    def overlap(self) -> float:
        smaller = min(len(self.a.topic), len(self.b.topic))
        return len(self.shared) / smaller if smaller else 0.0

    @cached_property
    def related(self) -> bool:
        return bool(self.shared or self.a.topics & self.b.topics or self.related_by_similarity)

    def any_has(self, role: str) -> bool:
        return self.a.has(role) or self.b.has(role)

    def subject(self, fallback: str = "the same topic") -> str:
        """Up to three shared words as written in ``a``, in order, for reasons."""
        words: list[str] = []
        for start, end, key in self._surface(self.a):
            word = self.a.text[start:end].lower()
            if key in self.shared and word not in words:
                words.append(word)
        return " ".join(words[:3]) or fallback

    @staticmethod
    def _surface(features: Features) -> list[tuple[int, int, str]]:
        spots = [(t.start, t.end, t.key) for t in features.tokens]
        spots += [(v.start, v.end, v.text) for v in features.values]
        return sorted(spots)


def _spans(side: Side, features: Features, ranges: Iterable[tuple[int, int]]) -> list[Span]:
    return [Span(side, start, end, features.text[start:end]) for start, end in ranges]


def _extra_spans(pair: _Pair) -> list[Span]:
    """Tokens and values found on one side only: the default "differing parts"."""
    out: list[Span] = []
    sides: tuple[tuple[Side, Features, frozenset[str]], ...] = (
        ("a", pair.a, pair.a_extra),
        ("b", pair.b, pair.b_extra),
    )
    for side, feats, extra in sides:
        ranges = {(t.start, t.end) for t in feats.tokens if t.key in extra}
        ranges |= {(v.start, v.end) for v in feats.values if v.text in extra}
        out += _spans(side, feats, sorted(ranges))
    return out


def _polarity(pair: _Pair) -> Finding | None:
    """Negation flips ("I like X" / "I don't like X") and antonyms ("love X" / "hate X")."""
    a, b = pair.a, pair.b
    if not pair.shared or pair.overlap < 0.5:
        return None
    if pair.a_extra and pair.b_extra:
        a_names = {v.text for v in a.values if v.kind == "name"}
        b_names = {v.text for v in b.values if v.kind == "name"}
        if len(pair.shared) < 2 or (pair.a_extra & a_names and pair.b_extra & b_names):
            return None  # each side adds its own object: likely two different things
    if a.negated != b.negated:
        if a.sentiment * b.sentiment < 0:
            return None  # "I like X" / "I don't hate X": both flips cancel
        side: Side = "b" if b.negated else "a"
        feats, other = (b, a) if b.negated else (a, b)
        if not feats.negated_keys & (pair.topical | {v.text for v in other.values}):
            return None  # the negation is about something the other text does not say
        cue = " / ".join(feats.surface(c) for c in feats.cues if "negation" in c.roles)
        spans = _spans(side, feats, feats.cue_spans("negation"))
        reason = f"'{side}' negates the other about '{pair.subject()}' ({cue!r})"
        return Finding(POLARITY_SCORE, "negation", reason, tuple(spans))
    if a.sentiment * b.sentiment < 0:
        cue_a = next(a.surface(c) for c in a.cues if "sentiment" in c.roles)
        cue_b = next(b.surface(c) for c in b.cues if "sentiment" in c.roles)
        spans = _spans("a", a, a.cue_spans("sentiment")) + _spans("b", b, b.cue_spans("sentiment"))
        reason = f"opposite preferences about '{pair.subject()}': {cue_a!r} vs {cue_b!r}"
        return Finding(POLARITY_SCORE, "antonym", reason, tuple(spans))
    return None


def _preference_order(pair: _Pair) -> Finding | None:
    """ "I prefer X over Y" against "I prefer Y over X"."""
    pa, pb = pair.a.preference, pair.b.preference
    if pa is None or pb is None or pa != pb[::-1]:
        return None
    reason = f"preference order reversed: {pa[0]} over {pa[1]} vs {pb[0]} over {pb[1]}"
    spans = _spans("a", pair.a, pair.a.cue_spans("sentiment"))
    return Finding(POLARITY_SCORE, "antonym", reason, tuple(spans + _extra_spans(pair)))


def _comparable(kind_a: str, kind_b: str) -> bool:
    if kind_a == kind_b:
        return True
    kinds = {kind_a, kind_b}
    return "number" in kinds and any(k.startswith("number:") for k in kinds)


def _value_change(pair: _Pair) -> Finding | None:
    """The same attribute with a different value: "budget is 5000" / "budget is now 6000"."""
    a, b = pair.a, pair.b
    corrected = pair.any_has("correction")
    if pair.any_has("addition") and not corrected:
        return None  # "I also like ..." adds a value, it does not replace one
    cued = corrected or pair.any_has("change")
    if not corrected and (a.negated != b.negated or a.sentiment * b.sentiment < 0):
        return None  # "I like Thai food" / "I don't like Indian food": two objects, two stances
    best: Finding | None = None
    for kind_a in sorted({v.kind for v in a.values}):
        for kind_b in sorted({v.kind for v in b.values}):
            if not _comparable(kind_a, kind_b):
                continue
            only_a = [v for v in a.values if v.kind == kind_a and not _in(v, b.values)]
            only_b = [v for v in b.values if v.kind == kind_b and not _in(v, a.values)]
            if not only_a or not only_b:
                continue
            # Words each side adds besides the changed values name a different attribute.
            a_extra = pair.a_extra - {v.text for v in only_a}
            b_extra = pair.b_extra - {v.text for v in only_b}
            # The attribute must be named by a shared word, not just a unit ("minutes").
            attribute_words = pair.shared - _GENERIC_KEYS - {v.text for v in only_a + only_b}
            # ... unless a change cue says a shared quantity moved ("cap went up: 6,000 now").
            moved = (
                bool(attribute_words)
                and kind_a.split(":")[0] in _QUANTITIES
                and _one_claim(pair)
                and _explicit_change(pair)
            )
            if (a_extra and b_extra and not moved) or not (attribute_words or cued):
                continue
            if not cued and _qualified(a.values, b.values, kind_a, kind_b):
                continue  # "bed at 8pm" / "bed at 9pm on weekends": a narrower scope
            base = _VALUE_SCORES.get(kind_a.split(":")[0], VALUE_SCORE)
            score = min(1.0, base + (CUE_BONUS if cued else 0.0))
            if best is not None and best.score >= score:
                continue
            old = ", ".join(a.text[v.start : v.end] for v in only_a)
            new = ", ".join(b.text[v.start : v.end] for v in only_b)
            family, _, detail = kind_a.partition(":")
            attribute = pair.subject(fallback=detail if family == "slot" else family)
            reason = f"same attribute '{attribute}' with different values {old} vs {new}"
            spans = _spans("a", a, ((v.start, v.end) for v in only_a))
            spans += _spans("b", b, ((v.start, v.end) for v in only_b))
            best = Finding(score, "value_change", reason, tuple(spans))
    return best


_VALUE_SCORES = {"name": NAME_SCORE, "slot": SLOT_SCORE}
_QUANTITIES = frozenset({"money", "number", "percent", "time", "date"})
"""Value kinds that measure one attribute; names and slots may just be other things."""
_GENERIC_KEYS = frozenset(stem(word) for word in lx.GENERIC)


def _standing_change(feats: Features) -> bool:
    """A cue besides "instead" that says the change holds from here on ("from now on")."""
    return any(
        ("correction" in c.roles and c.text != "instead") or "change" in c.roles for c in feats.cues
    )


def _one_claim(pair: _Pair) -> bool:
    """Both texts are single sentences (a sentence piece of a longer text is one)."""
    return len(sentences(pair.a.text)) == 1 and len(sentences(pair.b.text)) == 1


def _explicit_change(pair: _Pair) -> bool:
    """A correction or a change cue stronger than a bare "now" ("went up", "raised")."""
    cues = pair.a.cues + pair.b.cues
    return any("correction" in c.roles or ("change" in c.roles and c.text != "now") for c in cues)


def _qualified(a: tuple[Value, ...], b: tuple[Value, ...], kind_a: str, kind_b: str) -> bool:
    """Whether one side adds a value of another kind (a day, a date, ...) the other lacks."""
    kinds_a = {v.kind for v in a} - {kind_a}
    kinds_b = {v.kind for v in b} - {kind_b}
    return bool(kinds_a ^ kinds_b)


def _in(value: Value, others: Iterable[Value]) -> bool:
    return any(o.text == value.text and _comparable(o.kind, value.kind) for o in others)


def _correction(pair: _Pair) -> Finding | None:
    """An explicit correction ("actually", "instead", "switched to") about the same topic."""
    side: Side = "b" if pair.b.has("correction") else "a"
    feats = pair.b if side == "b" else pair.a
    if not feats.has("correction") or pair.any_has("addition"):
        return None
    if pair.a.has("correction") and pair.b.has("correction"):
        return None  # two parallel corrections ("X instead of work" twice) correct nothing
    if not _says_something_else(pair, side):
        return None  # a correction that repeats the other text corrects nothing
    larger = max(len(pair.a.topic), len(pair.b.topic))
    rejects_shared = bool(feats.corrected_keys & pair.topical) and pair.overlap >= 0.5
    if side == "b" and pair.b.rejected_keys & pair.topical and _standing_change(pair.b):
        score = REJECTION_SCORE  # "from now on text me instead of emailing" rejects 'a'
    elif pair.topical and (len(pair.topical) / larger >= 1 / 3 or rejects_shared):
        score = CORRECTION_SCORE
    elif pair.related_by_similarity or _shared_slot(pair):
        score = LOOSE_CORRECTION_SCORE
    else:
        return None
    cue = " / ".join(feats.surface(c) for c in feats.cues if "correction" in c.roles)
    spans = _spans(side, feats, feats.cue_spans("correction")) + _extra_spans(pair)
    reason = f"explicit correction ({cue!r}) in '{side}' about '{pair.subject()}'"
    return Finding(score, "correction", reason, tuple(spans))


def _shared_slot(pair: _Pair) -> bool:
    """Both texts fill the same exclusive slot (transport, diet, ...)."""
    slots_a = {v.kind for v in pair.a.values if v.kind.startswith("slot:")}
    return any(v.kind in slots_a for v in pair.b.values)


def _says_something_else(pair: _Pair, side: Side) -> bool:
    a, b = pair.a, pair.b
    return bool(
        (pair.b_extra if side == "b" else pair.a_extra)
        or {(v.kind, v.text) for v in a.values} != {(v.kind, v.text) for v in b.values}
        or a.negated != b.negated
        or a.sentiment != b.sentiment
    )


RULES: tuple[Callable[[_Pair], Finding | None], ...] = (
    _polarity,
    _preference_order,
    _value_change,
    _correction,
)
"""Rule families in tie-break order: on equal scores the earlier family explains the verdict."""


class RuleJudge:
    """Offline contradiction judge built from :data:`RULES`; microseconds to a millisecond a pair.

    Args:
        threshold: findings scoring at least this make a contradiction, in (0, 1].
        related_similarity: embedding cosine that alone makes two texts "same topic", in [-1, 1].
    """

    __slots__ = ("_related_similarity", "_threshold")

    def __init__(
        self,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        related_similarity: float = DEFAULT_RELATED_SIMILARITY,
    ) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ConfigError("threshold", threshold, "a number in (0, 1]")
        if not -1.0 <= related_similarity <= 1.0:
            raise ConfigError("related_similarity", related_similarity, "a number in [-1, 1]")
        self._threshold = threshold
        self._related_similarity = related_similarity

    @property
    def name(self) -> str:
        return "rules"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        """Judge ``a`` (usually the older memory) against ``b`` (usually the newer one)."""
        _check_text("a", a)
        _check_text("b", b)
        if similarity is not None and not (
            isinstance(similarity, int | float) and math.isfinite(similarity)
        ):
            raise InputError("similarity", f"{similarity!r} is not a finite number")
        if similarity is not None and not -1.0 - 1e-6 <= similarity <= 1.0 + 1e-6:
            raise InputError("similarity", f"{similarity!r} is outside [-1, 1]")
        by_similarity = similarity is not None and similarity >= self._related_similarity
        pair = _Pair(extract(a), extract(b), by_similarity)
        # A repeated memory is a duplicate, whatever its clauses say to each other.
        findings = [] if a.strip() == b.strip() else _findings(pair) + _clause_findings(a, b)
        best = max(findings, key=lambda f: f.score, default=None)
        if best is not None and best.score >= self._threshold:
            return Verdict("contradiction", best.score, best.reason, best.kind, best.spans)
        spans = tuple(_extra_spans(pair))
        if pair.related:
            score = max(COMPATIBLE_SCORE, best.score if best else 0.0)
            return Verdict("compatible", score, _related_reason(pair), "none", spans)
        reason = "no shared topic words or topic classes"
        return Verdict("unrelated", UNRELATED_SCORE, reason, "none", spans)


def _findings(pair: _Pair) -> list[Finding]:
    return [found for rule in RULES if (found := rule(pair)) is not None]


def _clause_findings(a: str, b: str) -> list[Finding]:
    """Findings between sentences, and between clauses, of multi-part texts, spans moved to
    whole-text offsets.

    A long memory ("Finished Severance. Now I've started Shogun.") dilutes the overlap the
    rules need; comparing piece against piece keeps one claim against one claim. Sentences
    keep a claim split over clauses together; clauses isolate claims joined in one sentence.
    Only pieces sharing a topic word are compared.
    """
    return _piece_findings(sentences(a), sentences(b)) + _piece_findings(clauses(a), clauses(b))


def _piece_findings(
    pieces_a: list[tuple[int, str]], pieces_b: list[tuple[int, str]]
) -> list[Finding]:
    if len(pieces_a) < 2 and len(pieces_b) < 2:
        return []
    found: list[Finding] = []
    for offset_a, clause_a in pieces_a:
        features_a = extract(clause_a)
        for offset_b, clause_b in pieces_b:
            features_b = extract(clause_b)
            if features_a.topic & features_b.topic:
                for finding in _findings(_Pair(features_a, features_b, False)):
                    found.append(_shifted(finding, offset_a, offset_b))
    return found


def _shifted(finding: Finding, offset_a: int, offset_b: int) -> Finding:
    spans = tuple(
        replace(s, start=s.start + shift, end=s.end + shift)
        for s in finding.spans
        for shift in [offset_a if s.side == "a" else offset_b]
    )
    return replace(finding, spans=spans)


def _related_reason(pair: _Pair) -> str:
    if pair.shared:
        return f"same topic '{pair.subject()}' and no conflicting statement"
    classes = sorted(pair.a.topics & pair.b.topics)
    if classes:
        return f"related topics ({', '.join(classes)}) and no conflicting statement"
    return "embeddings are similar and no conflicting statement"


def _check_text(field: str, text: object) -> None:
    if not isinstance(text, str):
        raise InputError(field, f"expected a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError(field, "is empty")
