"""Hybrid ranking: dense + BM25 + graph expansion candidates, scored by a convex mix of
cosine and BM25, then combined with weight, recency and confidence into one explainable score.

    relevance = (1 - lexical_share) * max(cosine, 0)
                + lexical_share * bm25 / (bm25 + lexical_saturation)

Scores, not ranks, are mixed: reciprocal-rank fusion gave every candidate a near-equal
share whatever its cosine, so one shared word outweighed a large cosine gap. BM25 is
saturated on its own absolute scale rather than divided by the best candidate's score,
so a lone weak word match does not count as a perfect one. Recall@10 on the LoCoMo dev
split, no memory limit: 0.68 with RRF, 0.78 divided by the best, 0.80 saturated. RRF
still orders the hits whose neighbours graph expansion adds.
    gate      = 1 if relevance > (1 - lexical_share) * unrelated_cosine else 0
    final     = (sw * relevance + gate * (ww * weight / weight_cap + rw * recency))
                / (sw + ww + rw) * (0.5 + 0.5 * confidence) * session_factor

Relevance comes first: below the floor (a cosine unrelated texts reach, no shared word)
weight and recency add nothing, so a heavy or recent memory that has nothing to do with
the question never outranks one that has; above it they order the related ones. Before
the gate, 200 heartbeat lines reinforced to the weight cap outranked "I am allergic to
peanuts" for "What food allergy do I have?" (issue #25).

A caller may name memories it knows to be about the query (``Query.hints``: memory id
-> a score on BM25's scale, e.g. the agent loop's entity route, ``agent/entity_route.py``).
They join the candidates and their hint stands in for BM25 where it is larger:
``bm25 = max(bm25, hint)`` before saturation. So a hinted memory competes as if it shared
one word of that weight with the query: it neither adds to its own words' score nor
outranks a closer or more lexically similar memory by being hinted. Hints take no part
in fusion or graph expansion.

A superseded or deprecated candidate is not returned, but hands its score to the active
memory that superseded it (``_forwarded``): the question it answered best is now answered by
its replacement, whatever the replacement's own wording.

Only candidates are touched: the cost depends on the number of candidates, not on the
size of the atlas nor on how many sessions it holds. Dense and BM25 candidates come from
the atlas-wide indexes, scoped to the home session when ``cross_session`` is off; a
candidate list that loses members to the filters (inactive, expired, kinds, dates,
metadata) is searched again deeper until it is full or the scope is exhausted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory_core.engine import overlap
from memory_core.engine.decay import composite_weight, hours_since
from memory_core.engine.model import MemoryKind, MemoryStatus, Relation
from memory_core.engine.state import AtlasState, SessionState
from memory_core.engine.table import ACTIVE_CODE, kind_code, status_code

_SUPERSEDED_CODE = status_code(MemoryStatus.SUPERSEDED)
_DEPRECATED_CODE = status_code(MemoryStatus.DEPRECATED)
_SUMMARY_CODE = kind_code(MemoryKind.SUMMARY)
_NONE = np.empty(0, np.int64)
_FORWARD_HOPS = 4
"""How long a chain of replacements a superseded hit may follow to an active memory."""


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
    hints: Mapping[str, float] | None = None
    """Memory id -> score on BM25's scale, for memories a caller knows to be about the
    query (validated; ids the atlas no longer holds are left out)."""


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
    gate: np.ndarray
    sources: list[tuple[str, ...]]
    cross: np.ndarray


def rank(state: AtlasState, query: Query, now: float) -> Ranked:
    cfg = state.config
    home = state.sessions.get(query.session_id) if query.session_id is not None else None
    # the one session searched, or None for all of them
    scope = None if query.session_id is None or query.cross_session else home
    if query.session_id is not None and not query.cross_session and home is None:
        return _empty()

    # BM25 goes to the helper, the vector search stays here: the longer piece then starts
    # without the hand-off and its Python after FAISS does not queue for the GIL behind
    # BM25's (100k, idle box, per-call alternation: wall p50 0.94x, docs/performance.md)
    (lex_slots, lex_scores, lex_forwarded), (dense_slots, dense_sims, dense_forwarded) = (
        overlap.both(
            lambda: _lexical(state, scope, query, now),
            lambda: _dense(state, scope, query, now),
            overlap=_overlaps(state),
        )
    )

    fused = _fuse((dense_slots, lex_slots), cfg.rrf_k)
    graph_slots, graph_scores = np.empty(0, np.int64), np.empty(0)
    if cfg.graph_expansion and fused:
        graph_slots, graph_scores = _expand(state, fused, cfg.graph_expansion)
        keep = _eligible(state, graph_slots, query, now, scope)
        graph_slots, graph_scores = graph_slots[keep], graph_scores[keep]
        if len(graph_slots):
            order = np.lexsort((graph_slots, -graph_scores))
            graph_slots, graph_scores = graph_slots[order], graph_scores[order]
    hint_slots, hint_scores = _hinted(state, query, now, scope)
    lists = {
        "dense": dense_slots,
        "lexical": lex_slots,
        "graph": graph_slots,
        "hint": hint_slots,
        "replaces": np.concatenate((dense_forwarded, lex_forwarded)),
    }
    slots = _distinct(np.concatenate(tuple(lists.values())))  # every candidate once
    if not len(slots):
        return _empty()

    cosine = _lookup(slots, dense_slots, dense_sims, np.nan)
    missing = np.isnan(cosine)
    if missing.any():
        cosine[missing] = _cosines(state, slots[missing], query.vector)
    lexical = _lookup(slots, lex_slots, lex_scores, 0.0)
    graph = _lookup(slots, graph_slots, graph_scores, 0.0)

    evidence = (
        np.maximum(lexical, _lookup(slots, hint_slots, hint_scores, 0.0))
        if len(hint_slots)
        else lexical  # the same: BM25 scores are >= 0
    )

    table = state.table
    saturated = evidence / (evidence + cfg.lexical_saturation)
    # ndarray.clip is np.clip without its dispatch wrapper (a few µs a call)
    relevance = (1.0 - cfg.lexical_share) * cosine.clip(0.0, 1.0) + cfg.lexical_share * saturated
    accessed = table.accessed[slots]
    hours = hours_since(accessed, now)  # read by the weight and the recency alike
    weight = composite_weight(
        table.strength[slots], accessed, table.count[slots], table.assoc[slots], now, cfg,
        hours=hours,
    )  # fmt: skip
    recency = np.power(0.5, hours / cfg.recency_half_life_hours)
    confidence = table.confidence[slots].astype(np.float64)
    if home is not None:
        cross = table.session[slots] != home.code
    else:  # no session asked: nothing is foreign; asked but empty: everything is
        cross = np.full(len(slots), query.session_id is not None, dtype=bool)
    session_factor = np.where(cross, cfg.cross_session_factor, 1.0)
    gate = relevance_gate(relevance, cfg.unrelated_cosine, cfg.lexical_share)
    total = cfg.similarity_weight + cfg.weight_weight + cfg.recency_weight
    final = (
        (
            cfg.similarity_weight * relevance
            + gate * (cfg.weight_weight * weight / cfg.weight_cap + cfg.recency_weight * recency)
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
        gate=gate[order],
        sources=_sources(slots[order], lists),
        cross=cross[order],
    )


def _overlaps(state: AtlasState) -> bool:
    """Whether BM25 runs on the helper thread beside the vector search (``overlap``):
    when the index is HNSW (above ``hnsw_threshold``). An exact scan (every atlas up to
    20k memories by default) is short enough that the hand-off and the fight for the GIL
    and the second core ate the gain: at 20k, per-call alternation at load ~2.5 read wall
    p50 1.41 serial against 1.42-1.52 overlapped, p99 worse (docs/performance.md)."""
    return state.vectors.kind == "hnsw"


def relevance_gate(
    relevance: np.ndarray, unrelated_cosine: float, lexical_share: float
) -> np.ndarray:
    """1 where a memory is related to the query, 0 where it is not: whether its weight
    and recency may count.

    The floor is the relevance of an unrelated memory: cosine at ``unrelated_cosine`` and
    no word in common. At or below it the score is relevance alone, so an unrelated memory
    cannot outrank a related one whatever its weight. A step, not a ramp: a ramp up to
    twice the floor took part of the weight's say among related memories too and cost
    LoCoMo dev recall@10 0.016-0.019 (0.783 / 0.735 without limit / at 150); the step
    holds it (0.806 / 0.757).
    """
    floor = (1.0 - lexical_share) * unrelated_cosine
    if floor <= 0.0:  # no gate asked for
        return np.ones_like(relevance)
    gate: np.ndarray = (relevance > floor).astype(np.float64)
    return gate


Search = Callable[[int], tuple[np.ndarray, np.ndarray]]
"""k -> (scores, slots) best first: one index's top-k within the scope."""


Candidates = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(slots, scores) best first, and the slots among them reached through a memory they
replaced (``_forwarded``)."""


def _dense(state: AtlasState, scope: SessionState | None, query: Query, now: float) -> Candidates:
    code = None if scope is None else scope.code
    among = None if code is None else _among(state, code)
    k = state.config.dense_candidates
    return _candidates(
        state,
        lambda depth: state.vectors.search(query.vector, depth, among=among),
        k,
        query,
        now,
        scope,
        depth=_depth(state, k, code, among),
    )


def _lexical(state: AtlasState, scope: SessionState | None, query: Query, now: float) -> Candidates:
    group = None if scope is None else scope.code
    return _candidates(
        state,
        lambda k: state.lexical.search(query.text, k, group=group),
        state.config.lexical_candidates,
        query,
        now,
        scope,
    )


def nearest(
    state: AtlasState,
    vector: np.ndarray,
    k: int,
    session: int | None,
    *,
    ef_search: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` stored vectors nearest to ``vector`` as (similarities, slots), best first:
    among all memories, or among one session's (by code). ``ef_search``: the HNSW search
    breadth, when not the index's own."""
    among = None if session is None else _among(state, session)
    depth = _depth(state, k, session, among)
    while True:
        sims, slots = state.vectors.search(vector, depth, among=among, ef_search=ef_search)
        if session is None or among is not None:
            return sims, slots
        keep = state.table.session[slots] == session
        if np.count_nonzero(keep) >= k or len(slots) < depth:
            return sims[keep][:k], slots[keep][:k]
        depth *= 4


def _among(state: AtlasState, session: int) -> np.ndarray | None:
    """The slots to scope a vector search to one session, or None when the session holds
    most memories: then an unscoped search whose hits are filtered afterwards costs less
    than a scope bitmap over the whole index (callers filter by session and search
    deeper when the filter leaves too few)."""
    members = state.table.members(session)
    return None if 2 * len(members) >= len(state.vectors) else members


def _depth(state: AtlasState, k: int, session: int | None, among: np.ndarray | None) -> int:
    """How deep to search first: ``k``, or, when an unscoped search is filtered to one
    session afterwards, deep enough that ~k of the session's own remain with room to spare
    (free with HNSW up to ``efSearch``, which searches that wide anyway)."""
    if session is None or among is not None:
        return k
    members, total = len(state.table.members(session)), len(state.vectors)
    return k if members >= total else math.ceil(1.25 * k * total / max(members, 1)) + 2


def _candidates(
    state: AtlasState,
    search: Search,
    k: int,
    query: Query,
    now: float,
    scope: SessionState | None,
    *,
    depth: int | None = None,
) -> Candidates:
    """The ``k`` best eligible (slots, scores), searched ``depth`` deep (default ``k``) and
    deeper while filters thin them, with what replaced the superseded ones among them."""
    if k == 0:
        return np.empty(0, np.int64), np.empty(0, np.float32), _NONE
    depth = depth or k
    while True:
        scores, slots = search(depth)
        keep = _eligible(state, slots, query, now, scope)
        if np.count_nonzero(keep) >= k or len(slots) < depth:
            break
        depth *= 4
    slots, scores, forwarded = (
        (slots, scores, _NONE)
        if keep.all()
        else _forwarded(state, slots, scores, keep, query, now, scope)
    )
    order = np.lexsort((slots, -scores))[:k]
    return slots[order], scores[order], forwarded


def _forwarded(
    state: AtlasState,
    slots: np.ndarray,
    scores: np.ndarray,
    keep: np.ndarray,
    query: Query,
    now: float,
    scope: SessionState | None,
) -> Candidates:
    """The eligible hits, plus what replaced the hits that were superseded.

    A question that best matches an outdated statement ("how do I get home?" against
    "bring me back from Munich on the 12th") is asking about what the statement said, and
    the answer now is the memory that superseded it ("return from Zurich instead"), whose
    own wording may be far from the question. So a superseded or deprecated hit hands its
    score to the active memory that ``supersedes`` it (following a chain of at most
    ``_FORWARD_HOPS``), which keeps the larger of that and its own score. Forgotten
    (tombstoned) memories forward nothing: the user asked for them to be gone. Nor do
    summaries: a summary is retired because it quoted an outdated statement, and its
    re-issue is the same summary without it, not an answer to what the outdated part said.
    """
    table = state.table
    dropped = np.flatnonzero(~keep)
    held = slots[dropped]
    status = table.status[held]
    outdated = dropped[
        table.alive[held]
        & ((status == _SUPERSEDED_CODE) | (status == _DEPRECATED_CODE))
        & (table.kind[held] != _SUMMARY_CODE)
    ]
    if not len(outdated):
        return slots[keep], scores[keep], _NONE
    best = dict(zip(slots[keep].tolist(), scores[keep].tolist(), strict=True))
    forwarded: list[int] = []
    for position in outdated.tolist():
        replacement = _replacement(state, int(slots[position]))
        if replacement is None:
            continue
        score = float(scores[position])
        if (
            score > best.get(replacement, -math.inf)
            and _eligible(state, np.array([replacement]), query, now, scope)[0]
        ):
            best[replacement] = score
            forwarded.append(replacement)
    out_slots = np.fromiter(best, dtype=np.int64, count=len(best))
    out_scores = np.fromiter(best.values(), dtype=scores.dtype, count=len(best))
    return out_slots, out_scores, np.array(forwarded, dtype=np.int64)


def _replacement(state: AtlasState, slot: int) -> int | None:
    """The active memory that (through at most ``_FORWARD_HOPS`` replacements) supersedes
    ``slot``, or None."""
    table = state.table
    for _ in range(_FORWARD_HOPS):
        newer = [
            source
            for source, target, relation, _strength in state.edges.relations(slot)
            if relation is Relation.SUPERSEDES and target == slot and source != slot
        ]
        if not newer:
            return None
        slot = max(newer, key=lambda s: (table.created[s], s))  # the latest replacement
        if table.status[slot] == ACTIVE_CODE:
            return slot
    return None


def _eligible(
    state: AtlasState, slots: np.ndarray, query: Query, now: float, scope: SessionState | None
) -> np.ndarray:
    """Which candidate slots may be returned: alive, active, unexpired, in scope, filters."""
    if len(slots) == 0:
        return np.zeros(0, dtype=bool)
    table = state.table
    ok: np.ndarray = (
        table.alive[slots]
        & (table.status[slots] == ACTIVE_CODE)
        & (table.expires[slots] > now)
        & (table.confidence[slots] >= state.config.min_confidence)
    )
    if scope is not None:
        ok &= table.session[slots] == scope.code
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


def _hinted(
    state: AtlasState, query: Query, now: float, scope: SessionState | None
) -> tuple[np.ndarray, np.ndarray]:
    """The caller's hinted (slots, scores) that are held, eligible and scored above 0,
    sorted by slot."""
    slot_of = state.table.slot_of
    held = [(slot_of[i], s) for i, s in (query.hints or {}).items() if s > 0 and i in slot_of]
    if not held:
        return np.empty(0, np.int64), np.empty(0)
    slots = np.fromiter((h[0] for h in held), dtype=np.int64, count=len(held))
    scores = np.fromiter((h[1] for h in held), dtype=np.float64, count=len(held))
    keep = _eligible(state, slots, query, now, scope)
    order = np.argsort(slots[keep], kind="stable")
    return slots[keep][order], scores[keep][order]


def _fuse(ranked: tuple[np.ndarray, ...], k: float) -> dict[int, float]:
    """Reciprocal-rank fusion: slot -> sum over lists of 1 / (k + rank), in the order the
    lists are given (a dict: ~80 slots cost less in Python than a numpy ``unique``)."""
    fused: dict[int, float] = {}
    first = k + 1.0
    for slots in ranked:
        for position, slot in enumerate(slots.tolist()):
            fused[slot] = fused.get(slot, 0.0) + 1.0 / (first + position)
    return fused


def _expand(
    state: AtlasState, fused: dict[int, float], n_seeds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours of the best fused hits that are not fused hits themselves, each scored
    by its best seed's fused score times the edge strength."""
    slots = np.fromiter(fused, dtype=np.int64, count=len(fused))
    rrf = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
    seeds = np.lexsort((slots, -rrf))[:n_seeds]
    best = state.edges.spread(slots[seeds].tolist(), rrf[seeds].tolist(), fused)
    return (
        np.fromiter(best, dtype=np.int64, count=len(best)),
        np.fromiter(best.values(), dtype=np.float64, count=len(best)),
    )


def _distinct(slots: np.ndarray) -> np.ndarray:
    """``np.unique(slots)`` for a few hundred ints, without its general machinery."""
    slots = np.sort(slots)
    if len(slots) < 2:
        return slots
    kept: np.ndarray = slots[np.concatenate(([True], slots[1:] != slots[:-1]))]
    return kept


def _lookup(slots: np.ndarray, keys: np.ndarray, values: np.ndarray, default: float) -> np.ndarray:
    """``values`` placed at the positions of ``keys`` in the sorted ``slots``."""
    out = np.full(len(slots), default, dtype=np.float64)
    if len(keys):
        out[slots.searchsorted(keys)] = values  # the method: np.searchsorted's wrapper costs more
    return out


def _sources(top: np.ndarray, lists: dict[str, np.ndarray]) -> list[tuple[str, ...]]:
    members = [(name, set(ranked.tolist())) for name, ranked in lists.items()]
    return [tuple(name for name, m in members if slot in m) for slot in top.tolist()]


def _cosines(state: AtlasState, slots: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosine of stored vectors with the query (one batched lookup)."""
    cosines: np.ndarray = (state.vectors.reconstruct(slots) @ vector).astype(np.float64)
    return cosines


def _empty() -> Ranked:
    e = np.empty(0)
    return Ranked(np.empty(0, np.int64), e, e, e, e, e, e, e, e, e, e, [], np.empty(0, bool))
