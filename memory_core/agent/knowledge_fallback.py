"""The long-term knowledge tier as the agent's fallback (second seed: three tiers).

The atlas answers first. Only when its best memory matches the input weakly, or it
found fewer memories than asked for, is verified knowledge consulted; the knowledge
that reaches the prompt carries its explanation ("match 0.72, source HR_API v3.1, ...")
and is cited through the feedback API, so a later change of that knowledge flags the
memory that relied on it.

The trigger uses the best hit's cosine similarity (``breakdown.dense``), not its final
score: the final score mixes in weight and recency, and ``relevance`` is rank evidence
that is high for the best hit of any query, however unrelated.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

from memory_core.agent.context import estimate_tokens
from memory_core.engine.model import RetrievalHit
from memory_core.errors import InputError, StoreError
from memory_core.knowledge.items import Citation, CitedBy
from memory_core.knowledge.retrieval import KnowledgeFilter, KnowledgeHit
from memory_core.knowledge.service import KnowledgeBase

log = logging.getLogger(__name__)

DEFAULT_MIN_MATCH = 0.5
"""Best memory cosine below this sends the agent to the knowledge tier."""
DEFAULT_TOP_K = 3
KNOWLEDGE_HEADER = "Verified knowledge (long-term tier):"


def best_match(hits: Sequence[RetrievalHit]) -> float:
    """Highest cosine similarity among ``hits``; 0 when there are none."""
    sims = [h.breakdown.dense for h in hits if not math.isnan(h.breakdown.dense)]
    return max(sims, default=0.0)


def knowledge_line(hit: KnowledgeHit) -> str:
    return f"- {hit.item.content} [{hit.explanation}]"


def knowledge_context(hits: Sequence[KnowledgeHit], budget: int) -> tuple[list[KnowledgeHit], str]:
    """Best knowledge hits whose lines fit ``budget`` tokens, and their context block."""
    used = estimate_tokens(KNOWLEDGE_HEADER)
    chosen: list[KnowledgeHit] = []
    for hit in sorted(hits, key=lambda h: -h.score):
        cost = estimate_tokens(knowledge_line(hit)) + 1
        if used + cost > budget:
            continue
        chosen.append(hit)
        used += cost
    if not chosen:
        return [], ""
    return chosen, "\n".join([KNOWLEDGE_HEADER, *(knowledge_line(h) for h in chosen)])


class KnowledgeFallback:
    """Consults a ``KnowledgeBase`` when the atlas has no good answer, and cites what it used.

    Args:
        kb: the knowledge base (its tier for lookups, its feedback loop for citations).
        min_match: best memory cosine below this triggers a lookup, in [0, 1].
        top_k: knowledge hits asked for per lookup, >= 1.
        flt: which knowledge may answer (sources, kinds, keys); any active item by default.
    """

    __slots__ = ("_kb", "_tier", "flt", "min_match", "top_k")

    def __init__(
        self,
        kb: KnowledgeBase,
        *,
        min_match: float = DEFAULT_MIN_MATCH,
        top_k: int = DEFAULT_TOP_K,
        flt: KnowledgeFilter | None = None,
    ) -> None:
        if not isinstance(min_match, (int, float)) or not 0.0 <= min_match <= 1.0:
            raise InputError("min_match", f"must be a number in [0, 1], got {min_match!r}")
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise InputError("top_k", f"must be an integer >= 1, got {top_k!r}")
        self._kb = kb
        self._tier = kb.tier()
        self.min_match = float(min_match)
        self.top_k = top_k
        self.flt = flt

    def needed(self, hits: Sequence[RetrievalHit], wanted: int) -> bool:
        """Too few memories, or none that matches well."""
        return len(hits) < wanted or best_match(hits) < self.min_match

    def consult(self, query: str, hits: Sequence[RetrievalHit], wanted: int) -> list[KnowledgeHit]:
        """Knowledge for ``query`` if the atlas's ``hits`` are not enough, else nothing.

        A database failure costs the agent its fallback for this turn, not the turn.
        """
        if not query.strip() or not self.needed(hits, wanted):
            return []
        try:
            return self._tier.lookup(query, top_k=self.top_k, flt=self.flt)
        except StoreError as exc:
            log.warning("knowledge fallback skipped: %s", exc)
            return []

    def prepare(
        self, query: str, hits: Sequence[RetrievalHit], wanted: int, budget: int
    ) -> tuple[list[KnowledgeHit], str]:
        """Consult if needed and fit the answers into the budget: all of it when memory
        found nothing, half of it otherwise (the memories keep the rest)."""
        found = self.consult(query, hits, wanted)
        return knowledge_context(found, budget if not hits else budget // 2)

    def cite(
        self, hits: Sequence[KnowledgeHit], *, cited_by_id: str, session_id: str | None
    ) -> list[Citation]:
        """Record that ``cited_by_id`` (a memory, or the session if nothing was stored)
        relied on each hit's item version, in one transaction."""
        if not hits:
            return []
        with self._kb.unit("knowledge citation") as unit:
            return [
                unit.feedback.cite(
                    h.item.id,
                    cited_by_id=cited_by_id,
                    cited_by_kind=CitedBy.MEMORY,
                    session_id=session_id,
                )
                for h in hits
            ]
