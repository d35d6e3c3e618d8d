"""Summaries must not keep saying what a superseded memory said.

A session summary quotes (and carries the provenance of) the memories it covers. When
one of them is superseded later, the memory itself leaves retrieval but the summary would
keep serving its claim. So each active summary covering a retired memory is re-issued:
the summarizer runs again over what it covered minus the retired memories, the new
summary ``supersedes`` the old one, which is deprecated (kept for audit, never
retrieved). The new summary is a new memory: it starts with a fresh access time, so it
can rank a little higher than the one it replaces did. Covered memories already evicted are gone from the graph and cannot be
quoted again; the re-issued summary covers what is still held.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus, Relation
from memory_core.engine.summarize import Summarizer, SummaryItem


def covering_summaries(atlas: ElasticMemoryAtlas, node_id: str) -> list[MemoryNode]:
    """Active summary memories that summarize ``node_id``."""
    found = []
    for edge in atlas.edges(node_id):
        if edge.relation is Relation.SUMMARIZES and edge.target_id == node_id:
            summary = atlas.get(edge.source_id)
            if summary.status is MemoryStatus.ACTIVE:
                found.append(summary)
    return found


def reissue_summaries(
    atlas: ElasticMemoryAtlas, retired: Iterable[str], summarizer: Summarizer
) -> list[str]:
    """Re-issue every active summary covering a ``retired`` memory without it (see module
    doc); returns the ids of the new summaries. Call under ``atlas.lock``."""
    retired_ids = set(retired)
    stale = {s.id: s for r in retired_ids if r in atlas for s in covering_summaries(atlas, r)}
    issued = []
    for summary in stale.values():
        if summary.id not in atlas:  # evicted by the capacity check of an earlier re-issue
            continue
        reason = "covered a superseded memory"
        atlas.set_status(summary.id, MemoryStatus.DEPRECATED, reason=reason)
        kept = [
            atlas.get(e.target_id)
            for e in atlas.edges(summary.id)
            if e.relation is Relation.SUMMARIZES
            and e.source_id == summary.id
            and e.target_id not in retired_ids
        ]
        kept = [n for n in kept if n.status is MemoryStatus.ACTIVE]
        replacement = _summarize(atlas, summary, kept, summarizer)
        if replacement is not None and summary.id in atlas and replacement.id != summary.id:
            atlas.link(replacement.id, summary.id, Relation.SUPERSEDES)
            issued.append(replacement.id)
    return issued


def _summarize(
    atlas: ElasticMemoryAtlas,
    old: MemoryNode,
    nodes: list[MemoryNode],
    summarizer: Summarizer,
) -> MemoryNode | None:
    if len(nodes) < 2:  # the engine does not summarize fewer than two memories either
        return None
    items = [SummaryItem(n.id, n.content, n.weight, n.created_at) for n in nodes]
    summary = summarizer.summarize(items, atlas.config.max_content_chars)
    by_id = {n.id: n for n in nodes}
    covered = [by_id[i] for i in summary.covered_ids if i in by_id]
    if not covered:
        return None
    provenance = dict.fromkeys(p for n in covered for p in (n.provenance or (n.id,)))
    node = atlas.add(
        summary.text,
        session_id=old.session_id,
        kind=MemoryKind.SUMMARY,
        metadata={**old.metadata, "covers": len(covered)},
        importance=old.importance,
        confidence=old.confidence,
        provenance=provenance,
    )
    for target in covered:
        if target.id in atlas and target.id != node.id:
            atlas.link(node.id, target.id, Relation.SUMMARIZES)
    return node
