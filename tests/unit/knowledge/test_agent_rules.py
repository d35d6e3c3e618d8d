"""The orchestrator's sinks into the knowledge base: a thrice-corrected statement becomes a
pending item, a folded episode a completed mid-term episode."""

from __future__ import annotations

from memory_core import AtlasConfig, ElasticMemoryAtlas, MemoryStatus, Relation
from memory_core.agent.rules import Orchestrator
from memory_core.embedding import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.knowledge import KnowledgeBase
from memory_core.knowledge.agent_sinks import knowledge_episodes, knowledge_review
from memory_core.knowledge.episodes import EpisodeStatus
from memory_core.knowledge.items import ItemStatus, SourceKind


def test_a_corrected_statement_becomes_a_knowledge_item_pending_review(
    kb: KnowledgeBase, clock: ManualClock, embedder: HashingEmbedder
) -> None:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(review_after_corrections=2), embedder=embedder, clock=clock
    )
    rules = Orchestrator(atlas, review=knowledge_review(kb))
    previous = None
    for amount in (100, 200, 300):
        node = atlas.add(f"The travel budget is {amount} euros", session_id="s1")
        if previous is not None:
            atlas.set_status(previous.id, MemoryStatus.SUPERSEDED, reason="corrected")
            atlas.link(node.id, previous.id, Relation.SUPERSEDES)
        fired = rules.after_store(node.id, "s1")
        previous = node
    (event,) = fired
    assert event.message == "moved to knowledge review after 2 corrections"
    with kb.unit() as unit:
        item = unit.items.get(str(event.item_id))
    assert item.status is ItemStatus.PENDING_REVIEW
    assert item.content == "The travel budget is 300 euros"
    assert item.source_kind is SourceKind.LEARNED_FROM_EPISODE
    assert item.key == f"memory.{event.source_ids[0]}"


def test_a_folded_episode_is_recorded_as_a_completed_episode(
    kb: KnowledgeBase, clock: ManualClock, embedder: HashingEmbedder
) -> None:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(episode_after_memories=2, merge_threshold=1.0), embedder=embedder, clock=clock
    )
    rules = Orchestrator(atlas, episodes=knowledge_episodes(kb))
    for text in ("The deadline is Friday", "Priya approves purchases", "Dana likes tea"):
        fired = rules.after_store(atlas.add(text, session_id="s1").id, "s1")
    (event,) = fired
    with kb.unit() as unit:
        episode = unit.episodes.get(str(event.item_id))
    assert episode.status is EpisodeStatus.COMPLETED and episode.session_id == "s1"
    assert episode.summary["memory_id"] == event.node_id
    assert episode.summary["folded"] == 2
