"""Candidate key facts: the turns of an imported or recorded conversation worth a probe.

A chat log or a recording arrives without key facts, and reading hundreds of turns to find
the ones worth testing is the slow part of tuning on one's own agent. Four signals point
at them, each shown to the user as a reason:

- **states a value**: a piece of the turn that is no question or request carries a typed
  value (a name other than a speaker's, a number, date or clock time) or a stated
  preference (``memory_core.conflicts.claims``, the parser the conflict judge uses);
- **says much**: the turn's information density (the engine's importance estimator, word
  surprisal) is in the top quarter of the conversation;
- **referred back to**: a later turn is about the same thing: their embeddings are at
  least as similar as the engine's ``link_threshold`` (what the atlas itself would link
  ``similar_to``), and the turn is at least as dense as the conversation's median turn
  (small talk echoes small talk: "Thanks!" ... "Thanks a lot!");
- **behind a read**: a recorded agent read got this turn's memory back; when a read ranked
  it first, that read's query (the agent's own question) is the draft probe.

A turn needs one signal to be proposed. Turns the agent's reads returned come first (what
the agent really used), the rest by information density. Measured on the LoCoMo dev split
(``python -m benchmarks.fact_candidates_bench``; MiniLM; no reads there): 57-64% of the
turns are proposed, holding 82-86% of the turns that key facts cite; 60-80% of the first
20 are such turns where the base rate is 19-32% (ROC AUC of the order 0.73-0.78). Ordering by how many signals agree did worse at the top (55-70%): the
other signals decide what is proposed and say why, density decides the order. The
proposal only orders: the user accepts, words the probe and decides whether the fact
should be recalled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from memory_core.conflicts.claims import claims
from memory_core.embedding.base import Embedder, embed_checked
from memory_core.engine.config import AtlasConfig
from memory_core.engine.importance import information_density, surprisal
from memory_core.harness.session_format import Conversation, Turn

DENSE_SHARE = 0.25
"""Share of a conversation's turns counted as "says much" (the densest ones)."""
PROBE_WORDS = 2
"""Most surprising words of a turn that its draft probe asks about."""
_ROWS = 512  # similarity rows per block: bounded memory on long conversations


@dataclass(frozen=True, slots=True)
class Candidate:
    """A turn proposed as a key fact, why, and a draft probe question to edit."""

    turn_id: str
    speaker: str
    text: str
    density: float
    reasons: tuple[str, ...]
    probe: str
    reads: int = 0
    """How many recorded reads returned the turn's memory."""


def propose(
    conversation: Conversation,
    embedder: Embedder,
    *,
    link_threshold: float | None = None,
) -> list[Candidate]:
    """Every turn with at least one signal, best first (see the module doc).

    ``link_threshold`` defaults to the engine's default. The slow part (embedding every
    turn) does not depend on the key facts, so marked turns stay in: see ``unmarked``.
    """
    threshold = AtlasConfig().link_threshold if link_threshold is None else link_threshold
    turns = list(conversation.turns())
    densities = [information_density(t.text, {}) for t in turns]
    dense_from = _top_share_floor(densities, DENSE_SHARE)
    median = _top_share_floor(densities, 0.5)
    referrers = referred_back(turns, embedder, threshold)
    reads_of = _reads_behind(conversation)
    speakers = {t.speaker for t in turns}
    found = []
    for turn, density, referrer in zip(turns, densities, referrers, strict=True):
        reads = reads_of.get(turn.id, [])
        reasons = [
            value_reason(turn.text, speakers),
            f"says much ({density:.2f})" if density >= dense_from else None,
            f"referred back to by {referrer[0]} ({referrer[1]:.2f})"
            if referrer is not None and density >= median
            else None,
            f"returned by {len(reads)} read{'s' if len(reads) > 1 else ''}" if reads else None,
        ]
        kept = tuple(r for r in reasons if r is not None)
        if kept:
            asked = [query for query, rank in reads if rank == 0]
            probe = asked[0] if asked else draft_probe(turn)
            found.append(
                Candidate(turn.id, turn.speaker, turn.text, density, kept, probe, len(reads))
            )
    found.sort(key=lambda c: (c.reads == 0, -c.density))
    return found


def unmarked(candidates: Iterable[Candidate], conversation: Conversation) -> list[Candidate]:
    """The candidates whose turn is no key fact's evidence yet."""
    marked = {turn_id for f in conversation.key_facts for turn_id in f.evidence}
    return [c for c in candidates if c.turn_id not in marked]


def value_reason(text: str, speakers: Iterable[str] = ()) -> str | None:
    """``states a name, number`` (and ``a preference``) for the pieces of ``text`` that are no
    question or request; None when they state no value.

    A name that is one of ``speakers`` (or its short form: the same first three letters,
    "Mel" for Melanie) is how people address each other, not a fact: on the LoCoMo dev
    split such turns are key-fact evidence no more often than any turn, other names 1.3 to
    1.7 times as often, numbers 1.4 to 2.3 times.
    """
    prefixes = {s.lower()[:3] for s in speakers}
    stating = [c for c in claims(text) if c.states]
    kinds: list[str] = sorted(
        {v.type for c in stating for v in c.values if v.type != "name" or v.key[:3] not in prefixes}
    )
    if any(c.likes for c in stating):
        kinds.append("preference")
    return f"states a {', '.join(kinds)}" if kinds else None


def referred_back(
    turns: list[Turn], embedder: Embedder, threshold: float
) -> list[tuple[str, float] | None]:
    """Per turn, the most similar later turn (its id and cosine) when at least ``threshold``."""
    if len(turns) < 2:
        return [None] * len(turns)
    vectors = embed_checked(embedder, [t.text for t in turns])
    found: list[tuple[str, float] | None] = []
    for start in range(0, len(turns), _ROWS):
        block = vectors[start : start + _ROWS] @ vectors.T
        for offset, row in enumerate(block):
            i = start + offset
            later = row[i + 1 :]
            if not len(later):
                found.append(None)
                continue
            j = int(np.argmax(later))
            best = float(later[j])
            found.append((turns[i + 1 + j].id, best) if best >= threshold else None)
    return found


def draft_probe(turn: Turn) -> str:
    """``What did <speaker> say about <w1> and <w2>?``: the turn's most surprising words.

    Words with digits are left out: a number is usually the answer, not the topic. A draft:
    the user rewords it so that recall is not string matching on the turn's words.
    """
    words = [w.strip(".,;:!?\"'()[]") for w in turn.text.split()]
    unique = list(
        dict.fromkeys(
            w for w in words if len(w) > 2 and w.isalpha() and w.lower() != turn.speaker.lower()
        )
    )
    picked = sorted(unique, key=lambda w: -surprisal(w.lower()))[:PROBE_WORDS]
    topic = " and ".join(w for w in unique if w in picked) or "this"
    return f"What did {turn.speaker} say about {topic}?"


def _top_share_floor(values: Iterable[float], share: float) -> float:
    """The smallest value among the top ``share`` of ``values`` (inf when there are none)."""
    ordered = sorted(values, reverse=True)
    if not ordered:
        return float("inf")
    return ordered[max(1, round(len(ordered) * share)) - 1]


def _reads_behind(conversation: Conversation) -> dict[str, list[tuple[str, int]]]:
    """Turn id -> (query, rank) of each recorded read that returned its memory, in time order."""
    found: dict[str, list[tuple[str, int]]] = {}
    for read in conversation.reads or ():
        for rank, turn_id in enumerate(dict.fromkeys(read.returned)):
            found.setdefault(turn_id, []).append((read.query, rank))
    return found
