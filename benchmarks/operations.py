"""The side-by-side scenario: the same memories and queries through the engine and the seed.

Both stores hold ``size`` memories created over ``SPAN_HOURS`` of manual-clock time: a
main session plus a few small sessions that get purged, capped at ``size + 1``. Each
store then runs, in this order: adds with auto-link (each new memory deleted again,
untimed, so the size stays put), adds at capacity (each evicts one), session purges,
top-10 retrievals, snapshot exports, decay passes that evict nothing, and decay passes
that do evict as the clock moves on.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import Dataset
from benchmarks.measure import Samples
from benchmarks.seed_reference import SeedAtlas
from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.embedding.hashing import HashingEmbedder

MAIN = "bench"
SPAN_HOURS = 24.0
START = 1_700_000_000.0
BUILD_CHUNK = 500
TEMP_SESSION_SIZE = 20
EVICT_JUMP_HOURS = 4.0
EVICT_STEP_HOURS = 0.25

OPS = (
    "add + auto-link",
    "add at capacity (evicts 1)",
    "end_session (purge 20)",
    "retrieve top-10",
    "snapshot export",
    "decay pass",
    "decay + eviction pass",
)


@dataclass(slots=True, frozen=True)
class Plan:
    """How many times each operation runs."""

    size: int
    adds: int
    retrievals: int
    capacity_adds: int
    sessions: int
    snapshots: int
    decays: int

    @classmethod
    def for_size(cls, size: int, *, smoke: bool = False) -> Plan:
        sessions = max(2, min(20, size // (10 * TEMP_SESSION_SIZE)))
        if smoke:
            return cls(size, 30, 30, 10, sessions, 1, 3)
        return cls(size, 1000, 1000, 200, sessions, 3 if size <= 10_000 else 2, 20)

    def reference(self) -> Plan:
        """The seed costs O(size) Python steps per call: 200 samples at 1k, 20 at 100k."""
        n = max(20, min(200_000_000 // self.size**2 * 2, 200))
        return replace(
            self,
            adds=min(self.adds, n),
            retrievals=min(self.retrievals, n),
            capacity_adds=min(self.capacity_adds, n),
            decays=min(self.decays, max(5, n // 10)),
            snapshots=min(self.snapshots, 2),
        )

    @property
    def main_size(self) -> int:
        return self.size - self.sessions * TEMP_SESSION_SIZE

    @property
    def extra(self) -> int:
        """Memories needed beyond ``size`` for the adds."""
        return self.adds + self.capacity_adds + 1


def engine_config(capacity: int) -> AtlasConfig:
    """Shipped defaults, capped, with automatic decay off so decay is timed on its own."""
    return AtlasConfig(max_nodes=capacity, decay_interval_seconds=0.0)


def _sessions(plan: Plan) -> list[tuple[str, range]]:
    """(session, dataset rows): the main session first, then the temporary ones."""
    out = [(MAIN, range(plan.main_size))]
    for n in range(plan.sessions):
        start = plan.main_size + n * TEMP_SESSION_SIZE
        out.append((f"temp-{n}", range(start, start + TEMP_SESSION_SIZE)))
    return out


def check_held(atlas: ElasticMemoryAtlas, size: int) -> ElasticMemoryAtlas:
    """The atlas, once it holds exactly the ``size`` memories the benchmark is named after;
    templated texts (folded into family summaries) or near-duplicates (merged) would
    otherwise leave it measuring a smaller atlas than it reports."""
    if len(atlas) != size:
        raise ValueError(
            f"benchmark atlas holds {len(atlas):,} memories, expected {size:,}: "
            "its texts fold or merge (make them distinct, see benchmarks.datasets)"
        )
    return atlas


def build_engine(data: Dataset, plan: Plan, clock: ManualClock) -> ElasticMemoryAtlas:
    """Load through the public batch API: importance, auto-link and indexing included."""
    atlas = ElasticMemoryAtlas(
        engine_config(plan.size + 1), embedder=HashingEmbedder(), clock=clock
    )
    step = SPAN_HOURS * 3600.0 * BUILD_CHUNK / max(plan.size, 1)
    for session, rows in _sessions(plan):
        for start in range(rows.start, rows.stop, BUILD_CHUNK):
            stop = min(start + BUILD_CHUNK, rows.stop)
            atlas.add_many(
                data.texts[start:stop], session_id=session, embeddings=data.vectors[start:stop]
            )
            clock.advance(step * (stop - start) / BUILD_CHUNK)
    return check_held(atlas, plan.size)


def build_reference(data: Dataset, plan: Plan, clock: ManualClock) -> SeedAtlas:
    """Load the seed's graph in bulk, each memory linked to the previous one of its session
    (its own auto-link would take O(size^2) to build 100k)."""
    ref = SeedAtlas(clock=clock.now, max_nodes=plan.size + 1)
    step = SPAN_HOURS * 3600.0 / max(plan.size, 1)
    for session, rows in _sessions(plan):
        previous: tuple[str, ...] = ()
        for i in rows:
            node = ref.add_memory(
                data.texts[i], {"session_id": session}, links_to=previous, embedding=data.vectors[i]
            )
            previous = (node.id,)
            clock.advance(step)
    return ref


def build(data: Dataset, plan: Plan, impl: str) -> tuple[Any, ManualClock]:
    clock = ManualClock(START)
    if impl == "engine":
        return build_engine(data, plan, clock), clock
    return build_reference(data, plan, clock), clock


def run(store: Any, clock: ManualClock, data: Dataset, plan: Plan, impl: str) -> list[Samples]:
    """Time every operation on a built store (mutates it)."""
    ops: _EngineOps | _SeedOps = _EngineOps(store) if impl == "engine" else _SeedOps(store)
    return _scenario(ops, clock, data, plan if impl == "engine" else plan.reference(), impl)


class _EngineOps:
    def __init__(self, atlas: ElasticMemoryAtlas) -> None:
        self.atlas = atlas

    def __len__(self) -> int:
        return len(self.atlas)

    def add(self, text: str, vector: np.ndarray) -> str:
        return self.atlas.add(text, session_id=MAIN, embedding=vector).id

    def undo_add(self, node_id: str, grew: bool) -> None:
        if grew:  # otherwise the text was merged into an older memory
            self.atlas.delete(node_id)

    def retrieve(self, text: str, vector: np.ndarray) -> object:
        return self.atlas.retrieve(text, top_k=10, session_id=MAIN, query_embedding=vector)

    def end_session(self, session: str) -> object:
        return self.atlas.end_session(session, mode="purge")

    def snapshot(self, path: Path) -> Path:
        return self.atlas.save_snapshot(path.with_suffix(".npz"))

    def decay(self) -> int:
        return sum(self.atlas.decay().values())

    decay_evict = decay

    def before_evict(self) -> None:
        """Nothing to do: the engine's passes evict a thin slice each."""

    def after_evict(self) -> None:
        """Nothing to do."""


class _SeedOps:
    def __init__(self, ref: SeedAtlas) -> None:
        self.ref = ref
        self._kept: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.ref)

    def add(self, text: str, vector: np.ndarray) -> str:
        return self.ref.add_memory_with_auto_link(text, MAIN, vector).id

    def undo_add(self, node_id: str, grew: bool) -> None:
        self.ref.graph.remove_node(node_id)

    def retrieve(self, text: str, vector: np.ndarray) -> object:
        return self.ref.retrieve(vector, top_k=10, session_id=MAIN)

    def end_session(self, session: str) -> object:
        return self.ref.end_session(session)

    def snapshot(self, path: Path) -> Path:
        return self.ref.export(path.with_suffix(".pkl"))

    def decay(self) -> int:
        self.ref.apply_decay()
        return 0

    def decay_evict(self) -> int:
        self.ref.apply_decay()
        return self.ref.evict_weak_memories()

    def before_evict(self) -> None:
        self._kept = dict(self.ref.graph.nodes(data="node"))

    def after_evict(self) -> None:
        """The seed's decay is cumulative, so one pass evicts most memories: put them back
        (weight 1.0) so that every timed pass runs at full size."""
        graph = self.ref.graph
        for node_id, node in self._kept.items():
            if node_id not in graph:
                node.weight = 1.0
                graph.add_node(node_id, node=node)


def until_retrieve(
    atlas: ElasticMemoryAtlas, clock: ManualClock, data: Dataset, plan: Plan
) -> ElasticMemoryAtlas:
    """The built engine brought, untimed, to the state the scenario times its retrieves
    in: after its writes (adds each deleted again, adds at capacity, session purges). For
    a call-by-call reproduction of the retrieve line (``profile_ops --as-bench``)."""
    _writes(_EngineOps(atlas), clock, data, plan, _samples(plan, "engine"))
    return atlas


def _samples(plan: Plan, impl: str) -> dict[str, Samples]:
    return {op: Samples(op=op, impl=impl, size=plan.size) for op in OPS}


def _writes(
    ops: _EngineOps | _SeedOps,
    clock: ManualClock,
    data: Dataset,
    plan: Plan,
    out: dict[str, Samples],
) -> None:
    """The scenario's writes, timed into ``out``: adds with auto-link (each deleted
    again), adds at capacity (each evicts one), session purges."""
    pool = iter(range(plan.size, len(data.texts)))
    add = out[OPS[0]]
    for _ in range(plan.adds):
        i, before = next(pool), len(ops)
        node_id = add.time(partial(ops.add, data.texts[i], data.vectors[i]))
        ops.undo_add(node_id, len(ops) > before)
        clock.advance(1.0)

    capacity = out[OPS[1]]
    i = next(pool)
    ops.add(data.texts[i], data.vectors[i])
    before = len(ops)
    for _ in range(plan.capacity_adds):
        i = next(pool)
        capacity.time(partial(ops.add, data.texts[i], data.vectors[i]))
        clock.advance(1.0)
    capacity.note = f"size {before} -> {len(ops)}"

    purge = out[OPS[2]]
    for session, _ in _sessions(plan)[1:]:
        purge.time(partial(ops.end_session, session))


def _scenario(
    ops: _EngineOps | _SeedOps, clock: ManualClock, data: Dataset, plan: Plan, impl: str
) -> list[Samples]:
    out = _samples(plan, impl)
    _writes(ops, clock, data, plan, out)

    retrieve = out[OPS[3]]
    for q in range(plan.retrievals):
        j = q % len(data.query_texts)
        retrieve.time(partial(ops.retrieve, data.query_texts[j], data.query_vectors[j]))
    retrieve.note = f"{len(ops)} memories"

    snapshot = out[OPS[4]]
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(plan.snapshots):
            path = Path(tmp) / f"snap-{n}"
            written = snapshot.time(partial(ops.snapshot, path))
            snapshot.note = f"{written.stat().st_size / 2**20:.1f} MiB file"

    decay = out[OPS[5]]
    evicted = 0
    for _ in range(plan.decays):
        evicted += decay.time(ops.decay)
    decay.note = f"{len(ops)} memories, {evicted} evicted"

    decay_evict = out[OPS[6]]
    clock.advance(EVICT_JUMP_HOURS * 3600.0)
    ops.before_evict()
    ops.decay_evict()
    ops.after_evict()
    before, evicted = len(ops), 0
    for _ in range(plan.decays):
        clock.advance(EVICT_STEP_HOURS * 3600.0)
        ops.before_evict()
        evicted += decay_evict.time(ops.decay_evict)
        ops.after_evict()
    decay_evict.note = (
        f"clock +{EVICT_STEP_HOURS:g} h per pass; size {before} -> {len(ops)},"
        f" {evicted / max(plan.decays, 1):.0f} evicted per pass"
    )
    return list(out.values())


def timed_build(data: Dataset, plan: Plan, impl: str) -> tuple[Any, ManualClock, float]:
    started = time.perf_counter()
    store, clock = build(data, plan, impl)
    return store, clock, time.perf_counter() - started
