"""Why a key fact was (not) recalled after a replay.

Each evidence turn is followed from the memory it was stored as, through the policy's
lifecycle trace (merged into a twin, covered by a summary, evicted — when, why and at
what weight), to its fate at the end. When a memory carrying the fact is still held but
the probe did not return it in the top-k, the probe is re-ranked read-only over
everything and the explanation names the memories that outranked it (or says that the
fact's memory was not even a retrieval candidate).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from memory_core.engine.clock import to_datetime
from memory_core.errors import NotFoundError
from memory_core.harness.metrics import FactOutcome
from memory_core.harness.policies import Hit, Lifecycle
from memory_core.harness.replay import Replay

OUTRANKED_SHOWN = 5


@dataclass(frozen=True, slots=True)
class EvidenceFate:
    """What became of one evidence turn: the chain of memories that carried it."""

    turn_id: str
    stored_as: str | None  # None: the write filter declined the turn
    steps: tuple[Lifecycle, ...]
    held_by: str | None  # memory carrying it at the end, if any
    after_turn: str | None = None  # the last turn replayed before its eviction


@dataclass(frozen=True, slots=True)
class Explanation:
    fact_id: str
    fact: str
    expect: str
    verdict: str  # recalled | outranked | not_a_candidate | evicted | never_stored
    summary: str
    evidence: tuple[EvidenceFate, ...]
    rank: int | None = None  # rank of the best carrier in the full re-ranking
    outranked_by: tuple[Hit, ...] = field(default_factory=tuple)


def explain(replay: Replay, fact_id: str) -> Explanation:
    """Explain one key fact of a finished replay."""
    outcome = next((f for f in replay.result.facts if f.fact_id == fact_id), None)
    if outcome is None:
        raise NotFoundError("key fact", fact_id)
    fact = next(f for f in replay.conversation.key_facts if f.id == fact_id)
    carriers = {h.id for h in replay.policy.carrying(frozenset(fact.evidence))}
    fates = tuple(_fate(replay, turn_id, carriers) for turn_id in fact.evidence)
    base = (outcome.fact_id, outcome.fact, outcome.expect)
    if outcome.recalled:
        return Explanation(
            *base,
            "recalled",
            f"recalled at rank {outcome.rank} of the probe's top {replay.result.top_k}.",
            fates,
            outcome.rank,
        )
    if carriers:
        return _outranked(replay, fact.probe, outcome, carriers, fates)
    if all(f.stored_as is None for f in fates):
        return Explanation(
            *base, "never_stored", "the write filter declined every evidence turn.", fates
        )
    return Explanation(*base, "evicted", _evicted_text(fates), fates)


def explain_missed(replay: Replay) -> list[Explanation]:
    """Explanations of every fact that did not come out as expected."""
    return [
        explain(replay, f.fact_id)
        for f in replay.result.facts
        if f.recalled != (f.expect == "recalled")
    ]


def _fate(replay: Replay, turn_id: str, carriers: set[str]) -> EvidenceFate:
    stored = replay.stored.get(turn_id)
    if stored is None:
        return EvidenceFate(turn_id, None, (), None)
    steps: list[Lifecycle] = []
    current = stored
    for record in replay.policy.trace:
        if record.node_id != current:
            continue
        steps.append(record)
        if record.kind == "merged":
            current = record.into
        elif record.kind == "evicted":
            break
    held = next((s.into for s in steps if s.kind == "summarized" and s.into in carriers), None)
    if current in carriers:
        held = current
    last = steps[-1] if steps else None
    after = _turn_before(replay, last.at) if last and last.kind == "evicted" else None
    return EvidenceFate(turn_id, stored, tuple(steps), held, after)


def _outranked(
    replay: Replay,
    probe: str,
    outcome: FactOutcome,
    carriers: set[str],
    fates: tuple[EvidenceFate, ...],
) -> Explanation:
    policy = replay.policy
    ranking = policy.retrieve(
        probe, replay.vectors[probe], top_k=max(len(policy), 1), session_id=None, reinforce=False
    )
    rank = next((i for i, h in enumerate(ranking, start=1) if h.id in carriers), None)
    base = (outcome.fact_id, outcome.fact, outcome.expect)
    if rank is None:
        return Explanation(
            *base,
            "not_a_candidate",
            f"still held ({', '.join(sorted(carriers))}) but not among the probe's retrieval "
            "candidates: neither its embedding nor its words were close enough.",
            fates,
        )
    above = tuple(ranking[: min(rank - 1, OUTRANKED_SHOWN)])
    shown = "; ".join(f"{h.id} ({h.score:.3f}): {h.content[:60]!r}" for h in above)
    return Explanation(
        *base,
        "outranked",
        f"still held but ranked {rank} (top-k is {replay.result.top_k}); "
        f"{ranking[rank - 1].score:.3f} against {shown}",
        fates,
        rank,
        above,
    )


def _evicted_text(fates: tuple[EvidenceFate, ...]) -> str:
    parts = []
    for fate in fates:
        if fate.stored_as is None:
            parts.append(f"{fate.turn_id} was never stored (write filter)")
            continue
        chain = [
            f"merged into {s.into}" if s.kind == "merged" else f"summarized by {s.into}"
            for s in fate.steps
            if s.kind != "evicted"
        ]
        last = fate.steps[-1] if fate.steps else None
        if last is not None and last.kind == "evicted":
            chain.append(
                f"evicted ({last.reason}, weight {last.weight:.3f}) at "
                f"{to_datetime(last.at).isoformat()} after turn {fate.after_turn}"
            )
        parts.append(f"{fate.turn_id} as {fate.stored_as}: " + ", ".join(chain or ["gone"]))
    return "; ".join(parts) + "."


def _turn_before(replay: Replay, at: float) -> str | None:
    turns = list(replay.conversation.turns())
    times = [t.at for t in turns]
    i = bisect.bisect_right(times, at) - 1
    return turns[i].id if i >= 0 else None
