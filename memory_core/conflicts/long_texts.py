"""Long texts judged sentence by sentence: a wrapper around any contradiction judge.

The judges read one statement well and a chatty turn badly (docs/conflicts.md, "Anchored on
real chat"): a turn's vector is far from a short reply's, so the pair falls under the topic
gate; the learned half speaks only between one-piece texts; the NLI model skips a text of
several statements. So a pair where either text has two or more sentences (``sentences.py``)
is judged twice over, through the wrapped judge: as a whole, as before, and as the pairs of
its sentences closest in meaning (at most :data:`MAX_PAIRS`, each with its own cosine, the
texts' sentences embedded in one batch). The pair contradicts when the whole does or one
sentence pair does; otherwise it is compatible when either is; the verdict's reason names
the sentences that decided, and its spans point into the whole texts.

A sentence pair passes the gates a pair of whole texts passes, no others:

- **the candidate gate**: it is judged only when its cosine reaches the detector's
  :data:`~memory_core.conflicts.detector.MIN_SIMILARITY`, under which the guard judges no
  stored memory either (two sentences of task chat on other topics, "I'll be on calls
  otherwise." / "Then do the hotel first, please.", 0.22);
- **the subject**: a sentence read alone loses what its neighbours said of it ("Train,
  definitely." / "Thanks." / "Slept four hours a night." lean on the turn around them), so
  it decides a contradiction alone only when it says whom it is about (``claims.py``: a
  subject, "I" / "my brother" / "User"); a fragment without one does not;
- **two looks**: over a judge with two looks, a sentence pair the quick look leaves open
  gets the second look, as a whole pair does (``TwoLookSentenceJudge``); the claim judge
  also leaves open a sentence pair its learned half alone calls a contradiction while the
  rules find nothing in common, however sure, and reads the two whole texts for it
  (the ``context`` of ``TwoLookJudge.first_look``): a fragment lost its turn.

Without the subject rule the learned halves, which speak alone between one-piece texts,
queued 15 pairs of chatter against chatter in the trip-approval scan (2 real); with it and
the quick look alone on sentence pairs, 7; with all three gates, 2 (docs/conflicts.md,
seventh pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memory_core.conflicts.claim_judge import _clip, first_person
from memory_core.conflicts.claims import claims
from memory_core.conflicts.detector import MIN_SIMILARITY
from memory_core.conflicts.sentences import Sentence, sentences
from memory_core.conflicts.verdict import (
    BaseJudge,
    ContradictionJudge,
    FirstLook,
    Span,
    TwoLookJudge,
    Verdict,
    judged_now,
)
from memory_core.embedding.base import Embedder, embed_checked
from memory_core.embedding.recent import RecentCache
from memory_core.engine.validate import is_count
from memory_core.errors import ConfigError

MAX_PAIRS = 6
"""Sentence pairs judged per text pair, closest first: a turn of three sentences against a
reply of two, all of them; a pasted page, its six sentences nearest the other text."""
SENTENCE_VECTORS = 16384
"""Sentence vectors kept (a stored memory meets many writes)."""


@dataclass(frozen=True, slots=True)
class SentencePair:
    """A sentence of each text and the cosine of their embeddings."""

    a: Sentence
    b: Sentence
    similarity: float

    @property
    def texts(self) -> tuple[str, str]:
        """The two sentences' text, older first."""
        return self.a.text, self.b.text


class SentenceJudge(BaseJudge):
    """Any judge, reading a long text one sentence at a time as well as whole.

    Args:
        inner: the judge that reads each pair (its ``name`` is this judge's name).
        embedder: embeds sentences to pick and gate the sentence pairs; default the shipped
            MiniLM, loaded on first use (the claim judge's own, so the vectors a caller
            ``prime``\\ s serve both).
        max_pairs: sentence pairs judged per text pair, at least 1.
        min_similarity: cosine a sentence pair needs to be judged (the candidate gate,
            module doc), in [-1, 1].
    """

    __slots__ = ("_embedder", "_inner", "_max_pairs", "_min_similarity", "_vectors")

    def __init__(
        self,
        inner: ContradictionJudge,
        *,
        embedder: Embedder | None = None,
        max_pairs: int = MAX_PAIRS,
        min_similarity: float = MIN_SIMILARITY,
    ) -> None:
        if not is_count(max_pairs):
            raise ConfigError("max_pairs", max_pairs, "a whole number of sentence pairs >= 1")
        if isinstance(min_similarity, bool) or not isinstance(min_similarity, int | float):
            raise ConfigError("min_similarity", min_similarity, "a number in [-1, 1]")
        if not -1.0 <= min_similarity <= 1.0:
            raise ConfigError("min_similarity", min_similarity, "a number in [-1, 1]")
        self._inner = inner
        self._embedder = embedder
        self._max_pairs = max_pairs
        self._min_similarity = float(min_similarity)
        self._vectors: RecentCache[np.ndarray] = RecentCache(SENTENCE_VECTORS)

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def inner(self) -> ContradictionJudge:
        """The wrapped judge."""
        return self._inner

    @property
    def second_looks(self) -> int:
        """Pairs the wrapped judge's second look has read (0 for a judge without one)."""
        return self._inner.second_looks

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        """Judge ``a`` (usually the older text) against ``b``: whole, and by sentence when
        either has several."""
        whole = self._inner.judge(a, b, similarity)  # checks the input
        (plan,) = self._plans([(a, b)])
        parts = [
            (pair, self._inner.judge(pair.a.text, pair.b.text, pair.similarity)) for pair in plan
        ]
        return _combined(a, b, whole, parts)

    def reads_model(self, a: str, b: str, similarity: float | None = None) -> bool:
        """Whether a first look at the pair may run a model: it reads sentence pairs (either
        text has several sentences: MiniLM on sentences not seen yet, a look per sentence
        pair), or the wrapped judge says its look would. The guard's writes leave such a
        pair to their worker (``detector.py``)."""
        if _several(a) or _several(b):
            return True
        return self._inner.reads_model(a, b, similarity)

    def read_ahead(self, pairs: Sequence[tuple[str, str, float]]) -> None:
        """Have the wrapped judge read, in one batch, what judging each ``(a, b, similarity)``
        will read: the whole pairs and their sentence pairs (see ``ClaimJudge.read_ahead``)."""
        plans = self._plans([(a, b) for a, b, _ in pairs])
        parts = [(p.a.text, p.b.text, p.similarity) for plan in plans for p in plan]
        self._inner.read_ahead([*pairs, *parts])

    def prime(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Take the embeddings a caller already has: the wrapped judge's, and, for a text of
        one sentence, this judge's own (its sentence costs no model run)."""
        self._inner.prime(model, texts, vectors)
        if model != self._sentence_embedder().name:
            return
        kept = []
        for text, vector in zip(texts, vectors, strict=True):
            found = sentences(text)
            if len(found) == 1 and found[0].text == text and first_person(text) == text:
                kept.append((text, np.asarray(vector, dtype=np.float32)))
        self._vectors.put_many(kept)

    def warm(self, texts: Sequence[str] = ()) -> None:
        """Pay first-use costs now: the wrapped judge's (its ``warm``), the sentence
        splitter, and the sentences of ``texts`` (stored memories) embedded in one batch."""
        self._inner.warm(texts)
        sentences("Warm up. The splitter loads once.")
        self._embedded([s.text for text in texts for s in _several(text)])

    def close(self) -> None:
        """Release what the wrapped judge holds (an HTTP judge's connection)."""
        self._inner.close()

    def _sentence_embedder(self) -> Embedder:
        if self._embedder is None:
            from memory_core.embedding.minilm import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    def _plans(self, pairs: Sequence[tuple[str, str]]) -> list[list[SentencePair]]:
        """The sentence pairs to judge of each text pair, closest first, over the candidate
        gate (none when both texts are one sentence), every sentence not yet embedded
        embedded in one batch."""
        split = [(_sentences_of(a, b), _sentences_of(b, a)) for a, b in pairs]
        self._embedded([s.text for sa, sb in split for s in (*sa, *sb)])
        return [self._closest(sa, sb) for sa, sb in split]

    def _closest(self, sa: tuple[Sentence, ...], sb: tuple[Sentence, ...]) -> list[SentencePair]:
        if not sa or not sb:
            return []
        va = self._embedded([s.text for s in sa])
        vb = self._embedded([s.text for s in sb])
        cosines = np.clip(va @ vb.T, -1.0, 1.0)
        order = np.argsort(-cosines, axis=None, kind="stable")[: self._max_pairs]
        rows, cols = np.unravel_index(order, cosines.shape)
        return [
            SentencePair(sa[i], sb[j], float(cosines[i, j]))
            for i, j in zip(rows.tolist(), cols.tolist(), strict=True)
            if cosines[i, j] >= self._min_similarity
        ]

    def _embedded(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` as the speaker says them ("User's ..." as "my ...",
        as the claim judge reads them), the ones not kept computed in one model call and
        handed to the wrapped judge, which then reads them for free."""
        said = [first_person(t) for t in texts]
        if not said:
            return np.zeros((0, 0), dtype=np.float32)
        missing = self._vectors.missing(said)
        if missing:
            embedder = self._sentence_embedder()
            vectors = embed_checked(embedder, missing)
            self._vectors.put_many(zip(missing, vectors, strict=True))
            self._inner.prime(embedder.name, missing, vectors)
        found = self._vectors.get_many(said)
        if any(v is None for v in found):  # more texts than the cache holds
            return embed_checked(self._sentence_embedder(), said)
        return np.stack([v for v in found if v is not None])


@dataclass(frozen=True, slots=True)
class _Looks:
    """What a long pair's open first look holds for its second: the wrapped judge's look at
    the whole pair and its looks at the sentence pairs, any of them open."""

    whole: FirstLook
    parts: tuple[tuple[SentencePair, FirstLook], ...]


class TwoLookSentenceJudge(SentenceJudge):
    """:class:`SentenceJudge` over a judge with two looks (``verdict.TwoLookJudge``), and
    one itself: its first look is open when the wrapped judge left the whole pair open, or
    a sentence pair's quick contradiction that may decide alone (``_confirmable``) while the
    whole is no sure contradiction; its second look gives every open look, whole or
    sentence, to the wrapped judge's second look in one batch. So an unsure sentence pair
    contradicts only when both looks say so: the quick look alone queued task chat in the
    trip-approval scan ("I'll be on calls otherwise." / "Then do the hotel first, please.",
    pair model p=0.72, cross-encoder 0.00)."""

    __slots__ = ("_two",)

    def __init__(self, inner: TwoLookJudge, **options: Any) -> None:
        super().__init__(inner, **options)
        self._two = inner

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        return judged_now(self, a, b, similarity)

    def first_look(
        self,
        a: str,
        b: str,
        similarity: float | None = None,
        *,
        context: tuple[str, str] | None = None,
    ) -> FirstLook:
        """The wrapped judge's look at the whole pair (with ``context``, if a caller gave
        one) and at its sentence pairs, each in the context of ``a`` and ``b``."""
        whole = self._two.first_look(a, b, similarity, context=context)  # checks the input
        (plan,) = self._plans([(a, b)])
        if not plan:
            return whole
        parts = tuple(
            (p, _confirmable(a, b, p, self._two.first_look(*p.texts, p.similarity, context=(a, b))))
            for p in plan
        )
        verdict = _combined(a, b, whole.verdict, [(p, look.verdict) for p, look in parts])
        sure = whole.verdict.is_contradiction and not whole.open
        if not (whole.open or (not sure and any(look.open for _, look in parts))):
            return FirstLook(a, b, verdict)
        return FirstLook(a, b, verdict, open=True, state=_Looks(whole, parts))

    def second_look(self, looks: Sequence[FirstLook]) -> list[Verdict]:
        """The final verdict of each look, every open look of the wrapped judge among them
        (whole pairs and sentence pairs) read by its second look in one batch."""
        held = [look.state if isinstance(look.state, _Looks) else None for look in looks]
        inner: list[FirstLook] = []
        for look, h in zip(looks, held, strict=True):
            inner += [look] if h is None else [h.whole, *(part for _, part in h.parts)]
        settled = iter(self._two.second_look(inner))
        out = []
        for look, h in zip(looks, held, strict=True):
            if h is None:
                out.append(next(settled))
                continue
            whole = next(settled)
            parts = [(pair, next(settled)) for pair, _ in h.parts]
            out.append(_combined(look.a, look.b, whole, parts))
        return out


def read_by_sentence(judge: ContradictionJudge, **options: Any) -> SentenceJudge:
    """``judge`` wrapped to read long texts sentence by sentence (``options`` as
    :class:`SentenceJudge` takes them), with two looks when ``judge`` has them."""
    if isinstance(judge, TwoLookJudge):
        return TwoLookSentenceJudge(judge, **options)
    return SentenceJudge(judge, **options)


def _several(text: str) -> tuple[Sentence, ...]:
    """The sentences of ``text`` that say something, when it has two or more."""
    found = sentences(text)
    if len(found) < 2:
        return ()
    return tuple(s for s in found if _says_something(s.text))


def _sentences_of(text: str, other: str) -> tuple[Sentence, ...]:
    """What a sentence pair takes from ``text``: its sentences when it has several, the
    whole text when only ``other`` has (no sentence pairs when neither has)."""
    several = _several(text)
    if several:
        return several
    if not _several(other):
        return ()
    found = sentences(text)
    return found[:1]


def _says_something(sentence: str) -> bool:
    """A sentence with a content word or a value ("Oh ok!" and "Yes." have none)."""
    return any(c.words or c.values for c in claims(sentence))


def _stands_alone(text: str, sentence: Sentence) -> bool:
    """Whether ``sentence`` of ``text`` may decide a contradiction alone: it is the whole
    text, or it states something (not a question or a request) and says whom it is about
    (module doc)."""
    if sentence.text == text.strip():
        return True
    return any(c.subject and c.states for c in claims(sentence.text))


def _confirmable(a: str, b: str, pair: SentencePair, look: FirstLook) -> FirstLook:
    """A sentence pair's first look, open only when it is a contradiction the second look
    is to confirm and it may decide alone (module doc); any other sentence pair's quick
    verdict stands. The second look confirms or overrules, it never finds: on fragments of
    task chat it found "He needs his own room, we don't share." / "Then do the hotel first,
    please." a contradiction (p=1.00) that the quick look had not."""
    alone = _stands_alone(a, pair.a) and _stands_alone(b, pair.b)
    if look.open and look.verdict.is_contradiction and alone:
        return look
    return FirstLook(look.a, look.b, look.verdict)


def _combined(
    a: str, b: str, whole: Verdict, parts: Sequence[tuple[SentencePair, Verdict]]
) -> Verdict:
    """The pair's verdict from the whole texts' and the sentence pairs' (module doc)."""
    found = [
        (pair, v)
        for pair, v in parts
        if v.is_contradiction and _stands_alone(a, pair.a) and _stands_alone(b, pair.b)
    ]
    best = max(found, key=lambda item: item[1].score, default=None)
    if best is not None and not (whole.is_contradiction and whole.score >= best[1].score):
        return _in_whole(a, b, *best)
    if whole.label != "unrelated":
        return whole
    related = [(pair, v) for pair, v in parts if v.label == "compatible"]
    if related:
        pair, verdict = max(related, key=lambda item: item[1].score)
        return _in_whole(a, b, pair, verdict)
    return whole


def _in_whole(a: str, b: str, pair: SentencePair, verdict: Verdict) -> Verdict:
    """A sentence pair's verdict as the whole pair's: the reason names the sentences, the
    spans point into the whole texts."""
    shift = {"a": pair.a.start, "b": pair.b.start}
    spans = tuple(
        Span(s.side, s.start + shift[s.side], s.end + shift[s.side], s.text) for s in verdict.spans
    )
    where = (
        f"sentence {_position(a, pair.a)} of the older text ('{_clip(pair.a.text)}') against "
        f"sentence {_position(b, pair.b)} of the newer ('{_clip(pair.b.text)}')"
    )
    return replace(verdict, reason=f"{verdict.reason}; {where}", spans=spans)


def _position(text: str, sentence: Sentence) -> str:
    found = sentences(text)
    index = next((i for i, s in enumerate(found) if s.start == sentence.start), 0)
    return f"{index + 1}/{len(found)}"
