"""Incremental BM25 over growable numpy posting lists.

Agent memory changes on every turn, so a static BM25 index (rebuilt per change) does
not fit; postings here support O(1) append and vectorised removal, and a query only
touches the postings of its own terms. Documents belong to groups (the atlas's
sessions): a search covers every document or one group, and its BM25 statistics (IDF,
average document length) are those of the collection it covers — one session's alone,
or the whole atlas's, so scores of documents from different sessions are comparable.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain, compress

import numpy as np

from memory_core.engine.index.topk import largest
from memory_core.errors import IndexError_

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SEP = b"\x00"
_CHUNK_BYTES = bytes(
    c if c in b"abcdefghijklmnopqrstuvwxyz0123456789'\x00" else 32 for c in range(256)
)
"""Byte translation keeping what words are made of (and the text separator), the rest
to spaces."""
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "i'm",
        "if",
        "in",
        "into",
        "is",
        "it",
        "it's",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "just",
        "also",
        "very",
        "really",
        "about",
        "up",
        "out",
        "am",
        "im",
        "ok",
        "okay",
        "yes",
        "yeah",
    ]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased content words with a light plural fold ("seats" -> "seat")."""
    return list(_tokens(text))


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    """``tokenize``, kept for recent texts: an agent's turn is tokenised as its recall's
    query, again when it is stored and again when it is evicted (~16 µs each for a chat
    line; a third of a replay's BM25 upkeep)."""
    return tuple(term for word in _WORD.findall(text.lower()) if (term := _term(word)))


def _term(word: str) -> str | None:
    """The index term of one lower-cased word, None for a stopword or a single letter."""
    if word in STOPWORDS or len(word) < 2:
        return None
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_PROBE = "Seats, glasses and a bus: I'm at Joe's rock'n'roll bar at 9 with 42 dogs."
TOKENIZER = hashlib.sha256(
    repr((_WORD.pattern, _CHUNK_BYTES, sorted(STOPWORDS), tokenize(_PROBE))).encode()
).hexdigest()[:16]
"""Names how texts become terms (the word pattern, the stopwords, and what they and the
plural fold make of a probe sentence): saved postings are used only by the tokenizer that
made them (``snapshot.lexical``); a change to any of these gives another name."""

_TF_BITS = 32
"""A term held by one document is stored as one int, ``slot << _TF_BITS | tf``: most terms
of a large atlas (ids, numbers, names) occur once, and a ``_Postings`` with its two arrays
costs ~250 B more than that int (125 B per memory at 100k benchmark memories)."""
_TF_MASK = (1 << _TF_BITS) - 1
_SHORT = 64
"""Postings up to this long are searched for one slot as a Python list."""


class _Postings:
    """One term's (slot, term frequency) pairs, once two or more documents hold it.

    ``generation`` is the index's generation it was made in: a ``LexicalIndex.freeze``
    starts a new one, and the index copies a postings object of an older generation
    before changing it, so what a freeze holds never changes."""

    __slots__ = ("generation", "n", "slots", "tf")

    def __init__(
        self, generation: int, slots: np.ndarray | None = None, tf: np.ndarray | None = None
    ) -> None:
        self.generation = generation
        self.slots = np.empty(4, dtype=np.int32) if slots is None else slots
        self.tf = np.empty(4, dtype=np.float32) if tf is None else tf
        self.n = 0 if slots is None else len(slots)

    @classmethod
    def of_one(cls, generation: int, code: int) -> _Postings:
        """The postings of a term held by one document so far (its ``code``)."""
        postings = cls(generation)
        postings.append(code >> _TF_BITS, code & _TF_MASK)
        return postings

    def copy(self, generation: int) -> _Postings:
        """The same postings in arrays of their own, with room to grow by one."""
        n = self.n
        slots = np.empty(n + 1, dtype=np.int32)
        tf = np.empty(n + 1, dtype=np.float32)
        slots[:n], tf[:n] = self.slots[:n], self.tf[:n]
        postings = _Postings(generation, slots, tf)
        postings.n = n
        return postings

    def append(self, slot: int, tf: float) -> None:
        if self.n == len(self.slots):
            self.slots = np.resize(self.slots, 2 * self.n)
            self.tf = np.resize(self.tf, 2 * self.n)
        self.slots[self.n] = slot
        self.tf[self.n] = tf
        self.n += 1

    def extend(self, slots: np.ndarray, tf: np.ndarray) -> None:
        end = self.n + len(slots)
        if end > len(self.slots):
            self.slots = np.resize(self.slots, max(end, 2 * self.n))
            self.tf = np.resize(self.tf, max(end, 2 * self.n))
        self.slots[self.n : end] = slots
        self.tf[self.n : end] = tf
        self.n = end

    def remove_one(self, slot: int) -> None:
        """Drop ``slot``'s posting (an eviction at capacity): the tail shifts down over it.
        A short list is searched in Python, faster than numpy's calls at this size."""
        n = self.n
        if n <= _SHORT:
            listed = self.slots[:n].tolist()
            if slot not in listed:
                return
            at = listed.index(slot)
        else:
            found = np.flatnonzero(self.slots[:n] == slot)
            if not len(found):
                return
            at = int(found[0])
        self._drop_at(at)

    def _drop_at(self, at: int) -> None:
        """Drop the posting at position ``at``: the tail shifts down over it."""
        n = self.n
        self.slots[at : n - 1] = self.slots[at + 1 : n]
        self.tf[at : n - 1] = self.tf[at + 1 : n]
        self.n = n - 1

    def remove(self, doomed: np.ndarray) -> None:
        """Drop the postings of slots marked in the boolean ``doomed`` (by slot), in one pass."""
        n = self.n
        gone = np.flatnonzero(doomed[self.slots[:n]])
        if len(gone) == 1:  # one of them held the term
            self._drop_at(int(gone[0]))
        elif len(gone):
            keep = np.ones(n, dtype=bool)
            keep[gone] = False
            kept = n - len(gone)
            self.slots[:kept] = self.slots[:n][keep]
            self.tf[:kept] = self.tf[:n][keep]
            self.n = kept


@dataclass(frozen=True, slots=True)
class PostingColumns:
    """A lexical index's postings as flat arrays (how a snapshot stores them): term ``i``
    holds ``counts[i]`` postings, the next ``counts[i]`` entries of ``slots`` and ``tf``
    (whole term frequencies), in the index's own order."""

    terms: list[str]
    counts: np.ndarray  # ints >= 1
    slots: np.ndarray  # ints
    tf: np.ndarray  # ints >= 1


def posting_columns(frozen: dict[str, _Postings | int]) -> PostingColumns:
    """The postings of a ``LexicalIndex.freeze`` as columns: the terms held by one
    document first (one int each, taken apart in one numpy pass), then the others."""
    singles: list[str] = []
    codes: list[int] = []
    shared: dict[str, _Postings] = {}
    for term, held in frozen.items():
        if isinstance(held, int):
            singles.append(term)
            codes.append(held)
        else:
            shared[term] = held
    packed = np.array(codes, dtype=np.int64)
    slots: list[np.ndarray] = [packed >> _TF_BITS]
    tf: list[np.ndarray] = [packed & _TF_MASK]
    for held in shared.values():
        slots.append(held.slots[: held.n])
        tf.append(held.tf[: held.n])
    counts = [1] * len(singles) + [held.n for held in shared.values()]
    return PostingColumns(
        terms=singles + list(shared),
        counts=np.array(counts, dtype=np.int64),
        slots=np.concatenate(slots).astype(np.int64),
        tf=np.concatenate(tf).astype(np.int32),
    )


class LexicalIndex:
    """BM25 (k1=1.2, b=0.75) over documents identified by int slot (< 2**31).

    A document's text is kept by reference (the caller holds the same string) and
    tokenised again when it is removed, rather than keeping a tuple of its terms; its
    length and group sit in arrays indexed by slot (one index serves the whole atlas,
    so the atlas's slots are its documents).
    """

    __slots__ = (
        "_dl",
        "_generation",
        "_group",
        "_group_docs",
        "_group_len",
        "_n_docs",
        "_postings",
        "_texts",
        "_total_len",
        "b",
        "k1",
    )

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, _Postings | int] = {}  # an int: one document's (_TF_BITS)
        self._texts: list[str | None] = []  # slot -> text, None where no document
        self._dl = np.zeros(64, dtype=np.float32)  # slot -> document length
        self._group = np.zeros(64, dtype=np.int32)  # slot -> group
        self._group_docs: dict[int, int] = {}  # group -> documents
        self._group_len: dict[int, int] = {}  # group -> summed document lengths
        self._n_docs = 0
        self._total_len = 0
        self._generation = 0  # bumped by freeze: older postings are copied before a change

    def __len__(self) -> int:
        return self._n_docs

    def add(self, slot: int, text: str, group: int = 0) -> None:
        """Index a document under a non-negative slot that is not indexed already."""
        if slot < len(self._texts) and self._texts[slot] is not None:
            raise IndexError_(f"lexical index already holds slot {slot}")
        tokens = _tokens(text)
        counts: dict[str, int] = {}
        for tok in tokens:
            counts[tok] = counts.get(tok, 0) + 1
        for term, tf in counts.items():
            held = self._postings.get(term)
            if held is None:  # a new term: its key is interned (one string per term, not
                # one per document holding it); a known term's key is interned already
                self._postings[sys.intern(term)] = int(slot) << _TF_BITS | tf
            elif isinstance(held, int):
                self._postings[term] = postings = _Postings.of_one(self._generation, held)
                postings.append(slot, tf)
            else:
                self._own(term, held).append(slot, tf)
        if slot >= len(self._texts):
            self._texts.extend([None] * (slot + 1 - len(self._texts)))
            self._dl = _grown(self._dl, slot + 1)
            self._group = _grown(self._group, slot + 1)
        self._texts[slot] = text
        self._dl[slot] = len(tokens)
        self._group[slot] = group
        self._n_docs += 1
        self._total_len += len(tokens)
        self._group_docs[group] = self._group_docs.get(group, 0) + 1
        self._group_len[group] = self._group_len.get(group, 0) + len(tokens)

    def add_many(self, slots: np.ndarray, texts: Sequence[str], groups: np.ndarray) -> None:
        """Index many documents at once, exactly as ``add`` one by one would (same
        postings in the same order): words are mapped to terms once per distinct word and
        the postings come out of one sort, so a 100k-memory snapshot indexes in a blink."""
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        if len(slots) != len(texts) or len(slots) != len(groups):
            raise IndexError_(f"{len(slots)} slots for {len(texts)} texts, {len(groups)} groups")
        if not len(slots):
            return
        held = [s for s in slots[slots < len(self._texts)].tolist() if self._texts[s] is not None]
        if held or len(np.unique(slots)) != len(slots) or slots.min() < 0:
            raise IndexError_(f"lexical index already holds (or is given twice) slots {held}")
        chunks = _chunks(texts)
        distinct = dict.fromkeys(chunks)
        term_ids: dict[str, int] = {}  # in first-seen order, as ``add`` would insert them
        expansion = [  # each distinct chunk's term codes: -1 a word that is no term
            [
                term_ids.setdefault(sys.intern(t), len(term_ids)) if (t := _term(w)) else -1
                for w in (_WORD.findall(word) if "'" in word else (word,))
            ]
            if chunk != _SEP
            else [-2]  # -2: between two texts
            for chunk in distinct
            for word in (chunk.decode(),)
        ]
        index_of = {chunk: i for i, chunk in enumerate(distinct)}
        which = np.fromiter(map(index_of.__getitem__, chunks), np.int64, len(chunks))
        codes = _expanded(expansion, which)
        docs = np.cumsum(codes == -2)
        kept = codes >= 0
        codes, docs = codes[kept], docs[kept]
        lengths = np.bincount(docs, minlength=len(slots))
        # (term, document) pairs sorted by term, then by document: each term's postings
        # in the order ``add`` would append them
        pairs, tf = np.unique(codes * len(slots) + docs, return_counts=True)
        pair_terms, pair_docs = np.divmod(pairs, len(slots))
        posted, counts = slots[pair_docs].astype(np.int32), tf.astype(np.float32)
        starts = np.flatnonzero(np.diff(pair_terms, prepend=-1))
        vocabulary = list(term_ids)
        for term_code, start, end in zip(
            pair_terms[starts].tolist(),
            starts.tolist(),
            [*starts[1:].tolist(), len(pairs)][: len(starts)],
            strict=True,
        ):
            term = vocabulary[term_code]
            stored = self._postings.get(term)
            if stored is None and end - start == 1:
                self._postings[term] = int(posted[start]) << _TF_BITS | int(counts[start])
            elif stored is None:  # copies: a view would keep the whole batch's array alive
                self._postings[term] = _Postings(
                    self._generation, posted[start:end].copy(), counts[start:end].copy()
                )
            else:
                if isinstance(stored, int):
                    stored = self._postings[term] = _Postings.of_one(self._generation, stored)
                self._own(term, stored).extend(posted[start:end], counts[start:end])
        self._enter(slots, texts, groups, lengths)

    def _enter(
        self, slots: np.ndarray, texts: Sequence[str], groups: np.ndarray, lengths: np.ndarray
    ) -> None:
        """Count in new documents (their postings are in already): texts, lengths, groups."""
        top = int(slots.max()) + 1
        if top > len(self._texts):
            self._texts.extend([None] * (top - len(self._texts)))
            self._dl = _grown(self._dl, top)
            self._group = _grown(self._group, top)
        for slot, text in zip(slots.tolist(), texts, strict=True):
            self._texts[slot] = text
        self._dl[slots] = lengths
        self._group[slots] = groups
        self._n_docs += len(slots)
        self._total_len += int(lengths.sum())
        for group, docs_in, length in zip(
            *_grouped(np.asarray(groups, dtype=np.int64), lengths), strict=True
        ):
            self._group_docs[group] = self._group_docs.get(group, 0) + docs_in
            self._group_len[group] = self._group_len.get(group, 0) + length

    def remove(self, slot: int) -> None:
        self.remove_many([slot])

    def remove_many(self, slots: Iterable[int]) -> None:
        """Forget documents; each affected term's postings are filtered once."""
        slots = list(slots)
        if len(slots) == 1:  # an eviction at capacity: no mask over every slot
            (slot,) = slots
            self._drop_postings(
                set(self._forget(slot)), lambda s: s == slot, lambda held: held.remove_one(slot)
            )
            return
        doomed = np.zeros(len(self._texts), dtype=bool)
        terms: set[str] = set()
        for slot in slots:
            tokens = self._forget(slot)
            if tokens:
                doomed[slot] = True
                terms.update(tokens)
        self._drop_postings(terms, lambda s: bool(doomed[s]), lambda held: held.remove(doomed))

    def _drop_postings(
        self,
        terms: Iterable[str],
        is_doomed: Callable[[int], bool],
        drop: Callable[[_Postings], None],
    ) -> None:
        """Take the doomed documents out of each term's postings: a single posting (an int)
        by ``is_doomed`` of its slot, a list by ``drop``; a term left with none goes."""
        for term in terms:
            held = self._postings.get(term)
            if held is None:  # only a snapshot's postings that disagree with its texts
                continue
            if isinstance(held, int):
                if is_doomed(held >> _TF_BITS):
                    del self._postings[term]
                continue
            held = self._own(term, held)
            drop(held)
            if held.n == 0:
                del self._postings[term]

    def _own(self, term: str, held: _Postings) -> _Postings:
        """``term``'s postings, safe to change: a copy in their place when a freeze may
        hold them (made before its generation)."""
        if held.generation == self._generation:
            return held
        self._postings[term] = copy = held.copy(self._generation)
        return copy

    def freeze(self) -> dict[str, _Postings | int]:
        """Every term's postings as they are now, unchanged by later adds and removals
        (the index copies a term's postings before it next changes them): a snapshot
        takes them under the atlas lock in one dict copy, and reads them outside it
        (``posting_columns``)."""
        self._generation += 1
        return dict(self._postings)

    def restore(
        self, slots: np.ndarray, texts: Sequence[str], groups: np.ndarray, saved: PostingColumns
    ) -> None:
        """Fill an empty index with documents whose postings were saved (``posting_columns``
        of a freeze, their slots already the ones given here): what ``add_many`` of the
        same texts builds, without tokenising them. Document lengths are the summed term
        frequencies of each slot. A term's postings are views of the saved arrays."""
        if self._n_docs or self._postings:
            raise IndexError_("lexical index restore needs an empty index")
        slots = np.asarray(slots, dtype=np.int64).reshape(-1)
        if len(slots) != len(texts) or len(slots) != len(groups):
            raise IndexError_(f"{len(slots)} slots for {len(texts)} texts, {len(groups)} groups")
        if not len(slots):
            return
        counts = saved.counts.astype(np.int64, copy=False)
        posted = saved.slots.astype(np.int32, copy=False)
        tf = saved.tf.astype(np.float32)
        single = counts == 1
        starts = np.cumsum(counts) - counts
        firsts = starts[single]
        codes = posted[firsts].astype(np.int64) << _TF_BITS | saved.tf[firsts].astype(np.int64)
        terms = list(map(sys.intern, saved.terms))
        postings: dict[str, _Postings | int] = dict(
            zip(compress(terms, single.tolist()), codes.tolist(), strict=True)
        )
        for at in np.flatnonzero(~single).tolist():
            start, end = int(starts[at]), int(starts[at] + counts[at])
            postings[terms[at]] = _Postings(self._generation, posted[start:end], tf[start:end])
        if len(postings) != len(terms):
            raise IndexError_("saved lexical postings name a term twice")
        top = int(slots.max()) + 1
        lengths = np.bincount(posted, weights=tf, minlength=top)[slots].astype(np.int64)
        self._postings = postings
        self._enter(slots, texts, groups, lengths)

    def _forget(self, slot: int) -> tuple[str, ...]:
        """Take a document out of the counts; its terms (none when the slot holds none)."""
        text = self._texts[slot] if 0 <= slot < len(self._texts) else None
        if text is None:
            return ()
        self._texts[slot] = None
        tokens = _tokens(text)
        self._n_docs -= 1
        self._total_len -= len(tokens)
        group = int(self._group[slot])
        self._group_len[group] -= len(tokens)
        self._group_docs[group] -= 1
        if not self._group_docs[group]:
            del self._group_docs[group], self._group_len[group]
        return tokens

    def search(
        self, text: str, k: int, *, group: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, slots) by BM25, best first, the lower slot first among equal
        scores: over every document, or over ``group``'s alone with that group's statistics."""
        if group is None:
            n_docs, total_len = len(self), self._total_len
        else:
            n_docs, total_len = self._group_docs.get(group, 0), self._group_len.get(group, 0)
        if n_docs == 0 or k <= 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        avgdl = max(total_len / n_docs, 1.0)
        if n_docs == self._n_docs:
            group = None  # the group holds every document: nothing to filter
        # each term's postings, in one array: the same float32 arithmetic per posting as a
        # loop over the terms, in a dozen numpy calls instead of a dozen per term
        slot_parts, tf_parts, dfs = [], [], []  # dfs: each term's documents
        postings = self._postings
        for term in set(_tokens(text)):
            held = postings.get(term)
            if held is None:
                continue
            if isinstance(held, int):
                term_slots, term_tf = self.postings(term)
            else:
                term_slots, term_tf = held.slots[: held.n], held.tf[: held.n]
            slot_parts.append(term_slots)
            tf_parts.append(term_tf)
            dfs.append(len(term_slots))
        if not dfs:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        slots, tf = np.concatenate(slot_parts), np.concatenate(tf_parts)
        if group is not None:  # ... in the group
            inside = self._group[slots] == group
            slots, tf = slots[inside], tf[inside]
            ends = np.cumsum(inside)[[end - 1 for end in accumulate(dfs)]].tolist()
            dfs = [end - start for start, end in zip([0, *ends], ends, strict=False)]
        idf = np.array(
            [math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) for df in dfs], dtype=np.float32
        )
        # k1 * (1 - b + b * dl / avgdl) and idf * tf * (k1 + 1) / (tf + norm), in float32,
        # in place: the same operations in the same order (each commutes bit for bit) on
        # two arrays instead of ten new ones a call (a long query holds ~50k postings at
        # 100k memories: docs/performance.md, session 14)
        norm = self._dl[slots]
        norm *= self.b
        norm /= avgdl
        norm += 1.0 - self.b
        norm *= self.k1
        norm += tf
        scores = idf.repeat(dfs)
        scores *= tf
        scores *= self.k1 + 1.0
        scores /= norm
        if not len(slots):
            return np.empty(0, np.float32), np.empty(0, np.int64)
        matched, totals = self._accumulate(slots, scores)
        best = largest(totals, k)
        return totals[best].astype(np.float32), best if matched is None else matched[best]

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(slots, term frequencies) of the documents holding ``term``, in indexing order
        (views; empty when none does)."""
        held = self._postings.get(term)
        if held is None:
            return np.empty(0, np.int32), np.empty(0, np.float32)
        if isinstance(held, int):
            return (
                np.array([held >> _TF_BITS], dtype=np.int32),
                np.array([held & _TF_MASK], dtype=np.float32),
            )
        return held.slots[: held.n], held.tf[: held.n]

    def _accumulate(
        self, slots: np.ndarray, scores: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """(matched slots ascending, their summed float64 scores), or (None, a tally by
        slot, 0 where none matched): the dense tally unless the postings are very few for
        the index's size (it costs one pass over all slots; a sort ~100x more a posting)."""
        if len(slots) * 64 < len(self._texts):
            uniq, inverse = np.unique(slots, return_inverse=True)
            return uniq.astype(np.int64), np.bincount(inverse, weights=scores)
        return None, np.bincount(slots, weights=scores, minlength=len(self._texts))


def _chunks(texts: Sequence[str]) -> list[bytes]:
    """Every text, lower-cased, cut at each character no word can hold, as one list with
    ``_SEP`` between texts. Done on ASCII bytes (a non-ASCII character can sit in no word)
    in three C passes, three times faster than the word regex over the same text; a chunk
    is one word unless it holds an apostrophe ("rock'n'roll"), so callers run ``_WORD``
    over each distinct chunk."""
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:  # a text holds the separator itself
        joined = "\x00".join(text.replace("\x00", " ") for text in texts)
    raw = joined.lower().encode("ascii", "replace").translate(_CHUNK_BYTES)
    return raw.replace(_SEP, b" " + _SEP + b" ").split()


def _expanded(expansion: list[list[int]], which: np.ndarray) -> np.ndarray:
    """``expansion[w]`` for each ``w`` in ``which``, concatenated (nearly every chunk is one
    word: then a plain lookup)."""
    sizes = np.array([len(e) for e in expansion], dtype=np.int64)
    flat = np.fromiter(chain.from_iterable(expansion), np.int64, int(sizes.sum()))
    if (sizes == 1).all():
        single: np.ndarray = flat[which]
        return single
    counts = sizes[which]
    firsts = np.cumsum(sizes) - sizes
    steps = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    out: np.ndarray = flat[np.repeat(firsts[which], counts) + steps]
    return out


def _grouped(groups: np.ndarray, lengths: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """(distinct groups, documents in each, summed lengths in each), as Python ints."""
    distinct, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    summed = np.bincount(inverse, weights=lengths, minlength=len(distinct)).astype(np.int64)
    return distinct.tolist(), counts.tolist(), summed.tolist()


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` extended with zeros to at least ``size`` entries (doubling)."""
    if size <= len(array):
        return array
    out = np.zeros(max(size, 2 * len(array)), dtype=array.dtype)
    out[: len(array)] = array
    return out
