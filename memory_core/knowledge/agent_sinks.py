"""The knowledge base as the destination of the agent loop's rules (``agent.rules``).

A statement users keep correcting becomes a pending knowledge item (the seed: demoted to
a long-term item awaiting verification); a folded episode becomes a completed mid-term
episode. Each factory returns the plain callable the ``Orchestrator`` takes, so the agent
package never imports the knowledge base (nor its database stack) to run its rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memory_core.engine.clock import to_datetime
from memory_core.engine.model import MemoryNode
from memory_core.knowledge.items import ItemDraft, SourceKind
from memory_core.knowledge.service import KnowledgeBase

CORRECTION_SOURCE = "agent-corrections"
CORRECTION_CONFIDENCE = 0.5
"""A statement users keep correcting is a candidate, not a verified fact."""


def knowledge_review(kb: KnowledgeBase) -> Callable[[MemoryNode, int, str], str | None]:
    """An ``agent.rules.ReviewSink``: the corrected statement goes to ``kb`` as a pending
    item keyed by the chain's oldest memory, one version per correction count."""

    def submit(node: MemoryNode, corrections: int, root_id: str) -> str | None:
        draft = ItemDraft(
            key=f"memory.{root_id}",
            content=node.content,
            source_kind=SourceKind.LEARNED_FROM_EPISODE,
            source_name=CORRECTION_SOURCE,
            version=str(corrections),
            effective_from=to_datetime(kb.clock.now()),
            confidence=CORRECTION_CONFIDENCE,
            data={"memory_id": node.id, "corrections": corrections},
            session_id=node.session_id,
        )
        with kb.unit("knowledge review after corrections") as unit:
            submission = unit.items.submit(draft)
        return submission.item.id if submission.item is not None else None

    return submit


def knowledge_episodes(
    kb: KnowledgeBase,
) -> Callable[[str, MemoryNode, Sequence[str]], str | None]:
    """An ``agent.rules.EpisodeSink`` that records each folded episode as a completed episode in ``kb``."""

    def record(session_id: str, node: MemoryNode, folded: Sequence[str]) -> str | None:
        with kb.unit("episode from the agent loop") as unit:
            started = unit.episodes.start(
                f"conversation in session {session_id}", session_id=session_id
            )
            done = unit.episodes.complete(
                started.id,
                summary={"text": node.content, "memory_id": node.id, "folded": len(folded)},
            )
        return done.id

    return record
