"""Forgetting: the decay pass, capacity eviction, removal, session purge and merging.

Selection is vectorised over the node table; only the memories actually removed are
touched one by one.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import psutil

from memory_core.engine.config import AtlasConfig
from memory_core.engine.decay import composite_weight, weight_before_association
from memory_core.engine.events import DecayApplied, MemoriesMerged, MemoryEvicted, MemoryPressure
from memory_core.engine.model import KIND_CODES, EvictionReason
from memory_core.engine.state import AtlasState, SessionState
from memory_core.engine.table import ACTIVE_CODE, NodeTable

WEIGHT_HISTORY_LIMIT = 5_000
"""Decay events carry every weight only for atlases up to this size (weight history)."""
PRESSURE_EVICT_FRACTION = 0.10


class EvictionMasks(NamedTuple):
    """Which memories a decay pass evicts, by reason; each memory in at most one mask."""

    expired: np.ndarray
    below_threshold: np.ndarray
    orphan: np.ndarray


def eviction_masks(
    cfg: AtlasConfig,
    *,
    weight: np.ndarray,
    now: float | np.ndarray,
    expires: np.ndarray,
    created: np.ndarray,
    degree: np.ndarray,
    pinned: np.ndarray,
    working: np.ndarray,
) -> EvictionMasks:
    """The decay pass's eviction rules over per-memory columns, as pure arithmetic.

    Expired (pinned never), then below ``evict_threshold``, then orphaned (no edges, below
    ``orphan_threshold``, older than the grace period); pinned and working-memory ones stay
    for the last two. Arrays broadcast: ``weight`` and ``now`` may carry a leading axis of
    future times (the forecast asks about many passes at once).
    """
    keep = pinned | working
    expired = (expires <= now) & ~pinned
    weak = (weight < cfg.evict_threshold) & ~keep & ~expired
    orphan = (
        (degree == 0)
        & (weight < cfg.orphan_threshold)
        & (now - created >= cfg.orphan_grace_hours * 3600.0)
        & ~keep
        & ~expired
        & ~weak
    )
    return EvictionMasks(expired, weak, orphan)


def decay_pass(state: AtlasState, now: float) -> dict[str, int]:
    """Recompute weights (with one association step) and evict what fell out.

    Works on whole column prefixes ``[0, high)`` with an ``alive`` mask rather than
    gathering the live slots out of every column: freed slots are computed and ignored,
    which is cheaper than a dozen fancy-indexed copies at 100k memories.
    """
    cfg, table = state.config, state.table
    state.last_decay = now
    state.counters["decay_passes"] += 1
    high = table.high
    alive = table.alive[:high]
    if not alive.any():
        return {}
    all_weights = reweigh(state, now)

    masks = eviction_masks(
        cfg,
        weight=all_weights,
        now=now,
        expires=table.expires[:high],
        created=table.created[:high],
        degree=table.degree[:high],
        pinned=table.pinned[:high],
        working=table.working[:high],
    )
    expired_all, weak_all, orphan_all = (alive & mask for mask in masks)
    if state.bus.wants(DecayApplied):
        slots = np.flatnonzero(alive)
        weight = all_weights[slots]
        history = (
            {
                str(table.ids[s]): float(w)
                for s, w in zip(slots.tolist(), weight.tolist(), strict=True)
            }
            if len(slots) <= WEIGHT_HISTORY_LIMIT
            else {}
        )
        state.bus.publish(
            DecayApplied(
                at=now,
                strategy=cfg.decay_strategy,
                nodes=len(slots),
                mean_weight=float(weight.mean()),
                min_weight=float(weight.min()),
                max_weight=float(weight.max()),
                weights=history,
            )
        )
    counts = {
        EvictionReason.EXPIRED.value: remove(
            state, np.flatnonzero(expired_all), EvictionReason.EXPIRED, now
        ),
        EvictionReason.BELOW_THRESHOLD.value: remove(
            state, np.flatnonzero(weak_all), EvictionReason.BELOW_THRESHOLD, now
        ),
        EvictionReason.ORPHAN.value: remove(
            state, np.flatnonzero(orphan_all), EvictionReason.ORPHAN, now
        ),
    }
    counts[EvictionReason.MEMORY_PRESSURE.value] = relieve_pressure(state, now)
    return {k: v for k, v in counts.items() if v}


def reweigh(state: AtlasState, now: float) -> np.ndarray:
    """A decay pass's weights: recompute every weight (one association step) in place;
    returns them over slots ``[0, high)``, freed slots included. A follower replaying a
    recorded pass calls this alone: the evictions arrive as their own events."""
    cfg, table = state.config, state.table
    high = table.high
    alive = table.alive[:high]
    base = weight_before_association(
        table.strength[:high], table.accessed[:high], table.count[:high], now, cfg
    )
    gain, floor, cap = cfg.association_gain, cfg.weight_floor, cfg.weight_cap
    if gain > 0:
        first = np.where(alive, np.clip(base + gain * table.assoc[:high], floor, cap), 0.0)
        table.assoc[:high] = state.edges.association(first)
    all_weights: np.ndarray = np.clip(base + gain * table.assoc[:high], floor, cap)
    np.copyto(table.weight[:high], all_weights, where=alive)
    return all_weights


def excess(state: AtlasState) -> int:
    """Memories held beyond ``max_nodes`` (0 or less: none to evict)."""
    limit = state.config.max_nodes
    return 0 if limit is None else len(state.table) - limit


def enforce_capacity(state: AtlasState, *, protect: int, now: float) -> int:
    """Evict the lowest-weight memories until ``max_nodes`` holds; pinned are never chosen,
    working-memory ones only when nothing else is left."""
    table, over = state.table, excess(state)
    if over <= 0:
        return 0
    slots = table.alive_slots()
    slots = slots[~table.pinned[slots] & (slots != protect)]
    return remove(state, _weakest(table, slots, over), EvictionReason.CAPACITY, now)


def _weakest(table: NodeTable, slots: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` of ``slots`` ordered by (working, weight, slot), without sorting all
    of them: only those at or below the k-th smallest weight are sorted."""
    idle = slots[~table.working[slots]]
    if 0 < k <= len(idle):
        weight = table.weight[idle]
        kth = np.partition(weight, k - 1)[k - 1]
        shortlist = idle[weight <= kth]
        picked: np.ndarray = shortlist[np.lexsort((shortlist, table.weight[shortlist]))][:k]
        return picked
    order = np.lexsort((slots, table.weight[slots], table.working[slots]))
    return slots[order[:k]]


def relieve_pressure(state: AtlasState, now: float) -> int:
    """Above the RAM watermark, evict the weakest tenth (the first seed's 70 % rule)."""
    used = _memory_used()
    if used < state.config.memory_watermark:
        return 0
    table = state.table
    slots = table.alive_slots()
    slots = slots[~table.pinned[slots]]
    n = int(len(slots) * PRESSURE_EVICT_FRACTION)
    victims = slots[np.lexsort((slots, table.weight[slots]))[:n]]
    removed = remove(state, victims, EvictionReason.MEMORY_PRESSURE, now)
    if state.bus.wants(MemoryPressure):
        state.bus.publish(MemoryPressure(at=now, rss_fraction=used, evicted=removed))
    return removed


class _ThisProcess:
    """psutil's handle on this process and the machine's RAM, made once per process: a
    fresh ``psutil.Process()`` reads /proc for its start time and ``virtual_memory()``
    parses all of /proc/meminfo, ~50 µs of a decay pass's ~65 µs here at 150 memories."""

    __slots__ = ("pid", "process", "total")

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.process = psutil.Process(self.pid)
        self.total = psutil.virtual_memory().total


_THIS: _ThisProcess | None = None


def _memory_used() -> float:
    """This process's resident memory as a fraction of the machine's RAM."""
    global _THIS
    if _THIS is None or _THIS.pid != os.getpid():  # first use, or a forked child
        _THIS = _ThisProcess()
    rss: int = _THIS.process.memory_info().rss
    total: int = _THIS.total
    return rss / total


def remove(state: AtlasState, slots: np.ndarray, reason: EvictionReason, now: float) -> int:
    """Take memories out of every structure, announcing each removal with its reason."""
    if len(slots) == 0:
        return 0
    table = state.table
    state.vectors.remove(slots)
    state.lexical.remove_many(slots.tolist())
    codes = table.session[slots]
    # sessions in order of first appearance (one slot, an eviction at capacity: its own)
    for code in dict.fromkeys(codes.tolist()):
        session = state.sessions[str(state.session_names[code])]
        for slot in slots[codes == code].tolist():
            if state.bus.wants(MemoryEvicted):
                state.bus.publish(
                    MemoryEvicted(
                        at=now,
                        session_id=session.id,
                        node_id=str(table.ids[slot]),
                        reason=reason,
                        content=str(table.contents[slot]),
                        kind=KIND_CODES[table.kind[slot]],
                        weight=float(table.weight[slot]),
                        created_at=float(table.created[slot]),
                        access_count=int(table.count[slot]),
                        provenance=table.provenance[slot],
                        metadata=dict(table.metadata[slot] or {}),
                    )
                )
            if table.working[slot]:  # free its place in the tier for a live memory
                session.working.remove(str(table.ids[slot]))
            state.edges.remove_node(slot)
            table.release(slot)
    state.families.discard(slots)
    state.counters[f"evicted:{reason.value}"] += len(slots)
    return len(slots)


def purge_session(state: AtlasState, session: SessionState, now: float) -> int:
    """Remove a session's memories, indexes and cached embeddings: nothing of it remains."""
    slots = state.session_slots(session)
    contents = [str(state.table.contents[s]) for s in slots.tolist()]
    removed = remove(state, slots, EvictionReason.SESSION_PURGE, now)
    forget = getattr(state.embedder, "forget", None)
    if callable(forget):
        forget(contents)
    del state.sessions[session.id]
    state.session_names[session.code] = None
    return removed


def merge_session(state: AtlasState, session: SessionState, now: float) -> int:
    """Fold near-duplicates into their older twin, keeping provenance and edges."""
    table, cfg = state.table, state.config
    members = state.session_slots(session)  # inactive ones too, as neighbours to skip
    slots = members[table.status[members] == ACTIVE_CODE]
    if len(slots) < 2:
        return 0
    sims, ids = state.vectors.search_many(state.vectors.reconstruct(slots), 4, among=members)
    merged = 0
    gone: set[int] = set()
    for row, slot in enumerate(slots.tolist()):
        if slot in gone:
            continue
        for sim, other in zip(sims[row].tolist(), ids[row].tolist(), strict=True):
            if other < 0 or other == slot or other in gone or sim < cfg.merge_threshold:
                continue
            if not table.alive[other] or table.status[other] != ACTIVE_CODE:
                continue
            keep, drop = (
                (slot, other) if table.created[slot] <= table.created[other] else (other, slot)
            )
            _absorb(state, keep, drop, float(sim), now)
            gone.add(drop)
            merged += 1
            if drop == slot:
                break
    return merged


def _absorb(state: AtlasState, keep: int, drop: int, similarity: float, now: float) -> None:
    table, edges = state.table, state.edges
    table.provenance[keep] = tuple(
        dict.fromkeys((*table.provenance[keep], *table.provenance[drop]))
    )
    table.strength[keep] = min(
        max(table.strength[keep], table.strength[drop]) * state.config.reinforce_factor,
        state.config.weight_cap,
    )
    table.count[keep] += table.count[drop]
    table.confidence[keep] = max(table.confidence[keep], table.confidence[drop])
    table.pinned[keep] |= table.pinned[drop]
    table.weight[[keep]] = composite_weight(
        table.strength[[keep]],
        table.accessed[[keep]],
        table.count[[keep]],
        table.assoc[[keep]],
        now,
        state.config,
    )
    for source, target, relation, strength in list(edges.relations(drop)):
        other = target if source == drop else source
        if other != keep:
            if source == drop:
                edges.link(keep, other, relation, strength)
            else:
                edges.link(other, keep, relation, strength)
    if state.bus.wants(MemoriesMerged):
        state.bus.publish(
            MemoriesMerged(
                at=now,
                session_id=state.session_of(keep),
                kept_id=str(table.ids[keep]),
                merged_id=str(table.ids[drop]),
                merged_content=str(table.contents[drop]),
                similarity=similarity,
            )
        )
    state.counters["merged"] += 1
    remove(state, np.array([drop]), EvictionReason.MERGED, now)
