"""What a replay measured: per-fact outcomes, per-conversation metrics, a run summary.

A key fact counts as *retrieved* when one of the probe's top-k memories carries one of
its evidence turns in its provenance (merged and summary memories carry the provenance
of what they absorbed), and as *retained* when any memory still held carries it.

- ``recall_at_k``, ``retention``, ``mrr``: over facts expected ``recalled``;
- ``forgetting_precision``: over facts expected ``forgotten``, the share NOT retrieved;
- ``weight`` / ``weight_percentile``: the best weight among memories carrying the fact,
  and where it ranks among all held memories (ties count half), over retained facts;
- ``agreement_at_k`` (recorded conversations only): of the memories a real agent got back
  at its reads, named by their turns, the share the replay's same read brings back too,
  pooled over reads ("would my agent still have remembered this?").

Run summaries pool facts across conversations (every fact counts once), so a
conversation with more key facts weighs more; per-conversation values stay available.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from memory_core.harness.policies import Held, Hit
from memory_core.harness.session_format import KeyFact


@dataclass(frozen=True, slots=True)
class FactOutcome:
    """One key fact after the replay; ``rank`` is 1-based, None when not in the top-k."""

    fact_id: str
    fact: str
    expect: str
    rank: int | None
    retained: bool
    weight: float | None
    weight_percentile: float | None
    hits: tuple[str, ...]
    trajectory: tuple[float | None, ...] = ()

    @property
    def recalled(self) -> bool:
        return self.rank is not None

    @property
    def reciprocal_rank(self) -> float:
        return 0.0 if self.rank is None else 1.0 / self.rank

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FactOutcome:
        """Inverse of a ``ConversationResult.to_dict`` fact row (KeyError/ValueError if bad)."""
        return cls(
            fact_id=str(data["fact_id"]),
            fact=str(data["fact"]),
            expect=str(data["expect"]),
            rank=None if data["rank"] is None else int(data["rank"]),
            retained=bool(data["retained"]),
            weight=_opt_float(data["weight"]),
            weight_percentile=_opt_float(data["weight_percentile"]),
            hits=tuple(str(h) for h in data["hits"]),
            trajectory=tuple(_opt_float(w) for w in data.get("trajectory", ())),
        )


@dataclass(frozen=True, slots=True)
class ReadOutcome:
    """A recorded read replayed: ``kept`` are the ``returned`` turns that came back again."""

    read_id: str
    at: float
    top_k: int
    returned: tuple[str, ...]
    kept: tuple[str, ...]
    hits: tuple[str, ...]

    @property
    def agreement(self) -> float | None:
        """None when the agent got nothing back (nothing to agree with)."""
        return len(self.kept) / len(self.returned) if self.returned else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agreement": self.agreement}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReadOutcome:
        return cls(
            read_id=str(data["read_id"]),
            at=float(data["at"]),
            top_k=int(data["top_k"]),
            returned=tuple(str(t) for t in data["returned"]),
            kept=tuple(str(t) for t in data["kept"]),
            hits=tuple(str(h) for h in data["hits"]),
        )


def read_outcome(
    read_id: str, at: float, top_k: int, returned: Sequence[str], hits: Sequence[Hit]
) -> ReadOutcome:
    """Which ``returned`` turns some hit carries in its provenance."""
    carried = {turn_id for hit in hits for turn_id in hit.provenance}
    return ReadOutcome(
        read_id=read_id,
        at=at,
        top_k=top_k,
        returned=tuple(returned),
        kept=tuple(t for t in returned if t in carried),
        hits=tuple(h.id for h in hits),
    )


def pooled_agreement(reads: Iterable[ReadOutcome]) -> float | None:
    """Kept over returned memories across all reads; None when no read returned any."""
    kept = returned = 0
    for read in reads:
        kept += len(read.kept)
        returned += len(read.returned)
    return kept / returned if returned else None


@dataclass(frozen=True, slots=True)
class ConversationResult:
    """Everything measured on one conversation under one policy and configuration."""

    conversation_id: str
    policy: str
    turns: int
    max_nodes: int | None
    top_k: int
    facts: tuple[FactOutcome, ...]
    final_nodes: int
    evictions: dict[str, int]
    wall_seconds: float
    trajectory_times: tuple[float, ...] = ()
    reads: tuple[ReadOutcome, ...] = ()
    """Replayed recorded reads; metrics and dicts name agreement only when there are any."""

    @property
    def agreement_at_k(self) -> float | None:
        return pooled_agreement(self.reads)

    @property
    def recall_at_k(self) -> float | None:
        return _mean(f.recalled for f in self._expected("recalled"))

    @property
    def retention(self) -> float | None:
        return _mean(f.retained for f in self._expected("recalled"))

    @property
    def mrr(self) -> float | None:
        return _mean(f.reciprocal_rank for f in self._expected("recalled"))

    @property
    def forgetting_precision(self) -> float | None:
        return _mean(not f.recalled for f in self._expected("forgotten"))

    @property
    def mean_weight(self) -> float | None:
        return _mean(f.weight for f in self._expected("recalled") if f.weight is not None)

    @property
    def mean_weight_percentile(self) -> float | None:
        values = (f.weight_percentile for f in self._expected("recalled"))
        return _mean(v for v in values if v is not None)

    def metrics(self) -> dict[str, Any]:
        """The headline numbers (JSON-ready)."""
        agreement = {"agreement_at_k": self.agreement_at_k} if self.reads else {}
        return {
            "recall_at_k": self.recall_at_k,
            "retention": self.retention,
            "mrr": self.mrr,
            "forgetting_precision": self.forgetting_precision,
            "mean_weight": self.mean_weight,
            "mean_weight_percentile": self.mean_weight_percentile,
            "final_nodes": self.final_nodes,
            "evictions": dict(sorted(self.evictions.items())),
            "wall_seconds": self.wall_seconds,
            **agreement,
        }

    def to_dict(self, *, trajectories: bool = False) -> dict[str, Any]:
        facts = []
        for f in self.facts:
            row = asdict(f)
            row["recalled"] = f.recalled
            if not trajectories:
                row.pop("trajectory")
            facts.append(row)
        out = {
            "conversation_id": self.conversation_id,
            "policy": self.policy,
            "turns": self.turns,
            "max_nodes": self.max_nodes,
            "top_k": self.top_k,
            **self.metrics(),
            "facts": facts,
        }
        if trajectories:
            out["trajectory_times"] = list(self.trajectory_times)
        if self.reads:
            out["reads"] = [r.to_dict() for r in self.reads]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConversationResult:
        """Inverse of ``to_dict`` (KeyError/TypeError/ValueError if the data is not one)."""
        return cls(
            conversation_id=str(data["conversation_id"]),
            policy=str(data["policy"]),
            turns=int(data["turns"]),
            max_nodes=data["max_nodes"],
            top_k=int(data["top_k"]),
            facts=tuple(FactOutcome.from_dict(f) for f in data["facts"]),
            final_nodes=int(data["final_nodes"]),
            evictions={str(k): int(v) for k, v in data["evictions"].items()},
            wall_seconds=float(data["wall_seconds"]),
            trajectory_times=tuple(float(t) for t in data.get("trajectory_times", ())),
            reads=tuple(ReadOutcome.from_dict(r) for r in data.get("reads", ())),
        )

    def _expected(self, expect: str) -> list[FactOutcome]:
        return [f for f in self.facts if f.expect == expect]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Pooled metrics over several conversations."""

    recall_at_k: float | None
    retention: float | None
    mrr: float | None
    forgetting_precision: float | None
    final_nodes: float
    memory_fraction: float
    evictions: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    conversations: int = 0
    facts: int = 0
    agreement_at_k: float | None = None
    reads: int = 0

    def to_dict(self) -> dict[str, Any]:
        """All fields; the agreement ones only when recorded reads were replayed."""
        out = asdict(self)
        if not self.reads:
            del out["agreement_at_k"], out["reads"]
        return out


def summarize(results: Sequence[ConversationResult]) -> RunSummary:
    """Pool facts over conversations; ``final_nodes`` is the mean, ``memory_fraction`` the
    mean of final nodes / turns (comparable across conversation lengths)."""
    recalled = [f for r in results for f in r.facts if f.expect == "recalled"]
    forgotten = [f for r in results for f in r.facts if f.expect == "forgotten"]
    evictions: Counter[str] = Counter()
    for r in results:
        evictions.update(r.evictions)
    n = max(len(results), 1)
    return RunSummary(
        recall_at_k=_mean(f.recalled for f in recalled),
        retention=_mean(f.retained for f in recalled),
        mrr=_mean(f.reciprocal_rank for f in recalled),
        forgetting_precision=_mean(not f.recalled for f in forgotten),
        final_nodes=sum(r.final_nodes for r in results) / n,
        memory_fraction=sum(r.final_nodes / max(r.turns, 1) for r in results) / n,
        evictions=dict(sorted(evictions.items())),
        wall_seconds=sum(r.wall_seconds for r in results),
        conversations=len(results),
        facts=len(recalled) + len(forgotten),
        agreement_at_k=pooled_agreement(read for r in results for read in r.reads),
        reads=sum(len(r.reads) for r in results),
    )


def first_rank(hits: Sequence[Hit], evidence: Iterable[str]) -> int | None:
    """1-based position of the first hit carrying any evidence turn."""
    wanted = set(evidence)
    for position, hit in enumerate(hits, start=1):
        if wanted.intersection(hit.provenance):
            return position
    return None


class EvidenceIndex:
    """Maps evidence turns to key facts so that held memories are scanned once per sample."""

    def __init__(self, facts: Sequence[KeyFact]) -> None:
        self.facts = tuple(facts)
        self._by_turn: dict[str, list[int]] = {}
        for i, fact in enumerate(self.facts):
            for turn_id in fact.evidence:
                self._by_turn.setdefault(turn_id, []).append(i)
        self.turns = frozenset(self._by_turn)
        # provenance -> the facts it carries, for every carrier provenance sampled so far
        self._facts_of: dict[tuple[str, ...], tuple[int, ...]] = {}

    def best_weights(self, held: Sequence[Held]) -> np.ndarray:
        """Per fact, the best weight of a held memory carrying it (NaN when none does)."""
        best = [math.nan] * len(self.facts)  # a list: a numpy scalar per look costs more
        facts_of = self._facts_of
        for memory in held:
            # a replay samples after every turn, mostly the same carriers: their facts are
            # looked up once per provenance, not once per turn of it per sample
            found = facts_of.get(memory.provenance)
            if found is None:
                found = facts_of[memory.provenance] = self._facts(memory.provenance)
            weight = memory.weight
            for i in found:
                if not weight <= best[i]:  # NaN compares False: first one wins
                    best[i] = weight
        return np.array(best, dtype=np.float64)

    def _facts(self, provenance: Sequence[str]) -> tuple[int, ...]:
        """The facts ``provenance`` carries, turn after turn (a fact twice if two of its
        turns are there: the second look changes nothing)."""
        by_turn = self._by_turn
        return tuple(i for turn_id in provenance for i in by_turn.get(turn_id, ()))


def weight_percentiles(weights: np.ndarray, held: Sequence[Held]) -> np.ndarray:
    """Percentile rank (0..1) of each weight among held weights; ties count half; NaN stays."""
    all_w = np.sort(np.array([m.weight for m in held], dtype=np.float64))
    if len(all_w) == 0:
        return np.full(len(weights), np.nan)
    below = np.searchsorted(all_w, weights, side="left")
    upto = np.searchsorted(all_w, weights, side="right")
    pct = (below + 0.5 * (upto - below)) / len(all_w)
    return np.where(np.isnan(weights), np.nan, pct)


def _mean(values: Iterable[Any]) -> float | None:
    items = [float(v) for v in values]
    return sum(items) / len(items) if items else None


def none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
