"""Hybrid ranking: dense + BM25 + graph expansion, fused by reciprocal rank, then combined
with weight, recency and confidence into one explainable score.

    relevance = 0.5 * rrf / rrf_max + 0.5 * max(cosine, 0)
    final     = (sw * relevance + ww * weight / weight_cap + rw * recency) / (sw + ww + rw)
                * (0.5 + 0.5 * confidence) * session_factor

Only candidates are touched: the cost depends on the number of candidates, not on the
size of the atlas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory_core._state import AtlasState, SessionState
from memory_core._table import ACTIVE_CODE
from memory_core.decay import composite_weight


@dataclass(slots=True, frozen=True)
class Query:
    text: str
    vector: np.ndarray
    top_k: int
    session_id: str | None
    cross_session: bool
    kind_codes: tuple[int, ...] | None
    since: float | None
    until: float | None
    metadata: Mapping[str, Any] | None


@dataclass(slots=True)
class Ranked:
    slots: np.ndarray
    final: np.ndarray
    dense: np.ndarray
    lexical: np.ndarray
    graph: np.ndarray
    relevance: np.ndarray
    weight: np.ndarray
    recency: np.ndarray
    confidence: np.ndarray
    session_factor: np.ndarray
    sources: list[tuple[str, ...]]
    cross: np.ndarray


def rank(state: AtlasState, query: Query, now: float) -> Ranked:
    cfg = state.config
    home, scope = _scope(state, query)
    scope_codes = np.array([s.code for s in scope], dtype=np.int32)
    if not scope:
        return _empty()

    dense_slots, dense_sims = _dense(state, scope, query, now, scope_codes)
    lex_slots, lex_scores = _lexical(state, scope, query, now, scope_codes)

    rrf: dict[int, float] = {}
    sources: dict[int, list[str]] = {}
    _fuse(rrf, sources, dense_slots, cfg.rrf_k, "dense")
    _fuse(rrf, sources, lex_slots, cfg.rrf_k, "lexical")
    n_lists = 1 + int(len(lex_slots) > 0)

    graph_score: dict[int, float] = {}
    if cfg.graph_expansion and rrf:
        seeds = sorted(rrf, key=lambda s: (-rrf[s], s))[: cfg.graph_expansion]
        for seed in seeds:
            for neighbour, strength in state.edges.neighbours(seed):
                # expansion only adds candidates: re-ranking found ones lifted a seed's
                # weaker neighbours (e.g. its 'before' chain) above the seed itself
                if neighbour in rrf:
                    continue
                score = rrf[seed] * strength
                if score > graph_score.get(neighbour, 0.0):
                    graph_score[neighbour] = score
        if graph_score:
            cand = np.fromiter(graph_score, dtype=np.int64, count=len(graph_score))
            cand = cand[_eligible(state, cand, query, now, scope_codes)]
            if len(cand):
                scores = np.array([graph_score[int(s)] for s in cand])
                ordered = cand[np.lexsort((cand, -scores))]
                _fuse(rrf, sources, ordered, cfg.rrf_k, "graph")
                n_lists += 1
    if not rrf:
        return _empty()

    slots = np.fromiter(rrf, dtype=np.int64, count=len(rrf))
    fused = np.array([rrf[int(s)] for s in slots])
    dense_map = dict(zip(dense_slots.tolist(), dense_sims.tolist(), strict=True))
    cosine = np.array([dense_map.get(int(s), np.nan) for s in slots], dtype=np.float64)
    missing = np.isnan(cosine)
    if missing.any():
        cosine[missing] = _cosines(state, slots[missing], query.vector)
    lex_map = dict(zip(lex_slots.tolist(), lex_scores.tolist(), strict=True))
    lexical = np.array([lex_map.get(int(s), 0.0) for s in slots])
    graph = np.array([graph_score.get(int(s), 0.0) for s in slots])

    table = state.table
    relevance = 0.5 * fused / (n_lists / (cfg.rrf_k + 1.0)) + 0.5 * np.clip(cosine, 0.0, 1.0)
    weight = composite_weight(
        table.strength[slots],
        table.accessed[slots],
        table.count[slots],
        table.assoc[slots],
        now,
        cfg,
    )
    hours = np.maximum(now - table.accessed[slots], 0.0) / 3600.0
    recency = np.power(0.5, hours / cfg.recency_half_life_hours)
    confidence = table.confidence[slots].astype(np.float64)
    if home is not None:
        cross = table.session[slots] != home.code
    else:  # no session asked: nothing is foreign; asked but empty: everything is
        cross = np.full(len(slots), query.session_id is not None, dtype=bool)
    session_factor = np.where(cross, cfg.cross_session_factor, 1.0)
    total = cfg.similarity_weight + cfg.weight_weight + cfg.recency_weight
    final = (
        (
            cfg.similarity_weight * relevance
            + cfg.weight_weight * weight / cfg.weight_cap
            + cfg.recency_weight * recency
        )
        / total
        * (0.5 + 0.5 * confidence)
        * session_factor
    )
    order = np.lexsort((slots, -final))[: query.top_k]
    return Ranked(
        slots=slots[order],
        final=final[order],
        dense=cosine[order],
        lexical=lexical[order],
        graph=graph[order],
        relevance=relevance[order],
        weight=weight[order],
        recency=recency[order],
        confidence=confidence[order],
        session_factor=session_factor[order],
        sources=[tuple(sources[int(s)]) for s in slots[order]],
        cross=cross[order],
    )


def _scope(state: AtlasState, query: Query) -> tuple[SessionState | None, list[SessionState]]:
    if query.session_id is None:
        return None, list(state.sessions.values())
    home = state.sessions.get(query.session_id)
    scope = [home] if home is not None else []
    if query.cross_session:
        scope += [s for s in state.sessions.values() if s.id != query.session_id]
    return home, scope


def _dense(
    state: AtlasState, scope: list[SessionState], query: Query, now: float, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    k = state.config.dense_candidates
    parts = [s.vectors.search(query.vector, k) for s in scope]
    sims = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.float32)
    slots = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
    keep = _eligible(state, slots, query, now, codes)
    slots, sims = slots[keep], sims[keep]
    order = np.lexsort((slots, -sims))[:k]
    return slots[order], sims[order]


def _lexical(
    state: AtlasState, scope: list[SessionState], query: Query, now: float, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    k = state.config.lexical_candidates
    if k == 0:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    parts = [s.lexical.search(query.text, k) for s in scope]
    scores = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.float32)
    slots = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
    keep = _eligible(state, slots, query, now, codes)
    slots, scores = slots[keep], scores[keep]
    order = np.lexsort((slots, -scores))[:k]
    return slots[order], scores[order]


def _eligible(
    state: AtlasState, slots: np.ndarray, query: Query, now: float, codes: np.ndarray
) -> np.ndarray:
    """Which candidate slots may be returned: alive, active, unexpired, in scope, filters."""
    if len(slots) == 0:
        return np.zeros(0, dtype=bool)
    table = state.table
    ok = (
        table.alive[slots]
        & (table.status[slots] == ACTIVE_CODE)
        & (table.expires[slots] > now)
        & (table.confidence[slots] >= state.config.min_confidence)
        & np.isin(table.session[slots], codes)
    )
    if query.kind_codes is not None:
        ok &= np.isin(table.kind[slots], query.kind_codes)
    if query.since is not None:
        ok &= table.created[slots] >= query.since
    if query.until is not None:
        ok &= table.created[slots] <= query.until
    if query.metadata:
        wanted = query.metadata.items()
        for i, slot in enumerate(slots):
            if ok[i]:
                meta = table.metadata[slot] or {}
                ok[i] = all(meta.get(k) == v for k, v in wanted)
    return ok


def _fuse(
    rrf: dict[int, float], sources: dict[int, list[str]], ranked: np.ndarray, k: float, name: str
) -> None:
    for rank_pos, slot in enumerate(ranked.tolist()):
        rrf[slot] = rrf.get(slot, 0.0) + 1.0 / (k + rank_pos + 1.0)
        sources.setdefault(slot, []).append(name)


def _cosines(state: AtlasState, slots: np.ndarray, vector: np.ndarray) -> np.ndarray:
    out = np.empty(len(slots))
    for i, slot in enumerate(slots.tolist()):
        session = state.sessions[state.session_of(slot)]
        out[i] = float(session.vectors.reconstruct(np.array([slot]))[0] @ vector)
    return out


def _empty() -> Ranked:
    e = np.empty(0)
    return Ranked(np.empty(0, np.int64), e, e, e, e, e, e, e, e, e, [], np.empty(0, bool))
