"""The rule log (eviction log page) and the graph's rule notes, from real rule firings."""

from __future__ import annotations

from memory_core import AtlasConfig, ElasticMemoryAtlas, MemoryStatus
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.dashboard.buffer import EventBuffer
from memory_core.dashboard.graph_view import RULE_BORDER, build_graph, tooltip
from memory_core.dashboard.rule_log import buffered, notes, rule_rows, texts, undo_forget
from memory_core.testing import HashingEmbedder, ManualClock

FACTS = [
    "The project deadline is Friday the 14th",
    "Priya approves purchases above 500 euros",
    "The Berlin office opens at nine",
    "Dana is allergic to cats",
]


def played() -> tuple[MemoryAgent, EventBuffer]:
    """Three facts (the first two folded into an episode), then 'forget that'."""
    atlas = ElasticMemoryAtlas(
        AtlasConfig(episode_after_memories=2, merge_threshold=1.0),
        embedder=HashingEmbedder(64),
        clock=ManualClock(),
    )
    buffer = EventBuffer()
    atlas.subscribe(buffer)
    agent = MemoryAgent(atlas, session_id="s1", settings=AgentSettings(remember="everything"))
    for fact in FACTS[:3]:
        agent.observe(fact, metadata={"speaker": "user"})
    agent.observe("forget what I just said")
    return agent, buffer


def test_rows_say_what_each_rule_did_newest_first() -> None:
    agent, buffer = played()
    forget, episode = rule_rows(buffered(buffer))
    assert (forget.rule, episode.rule) == ("forget_request", "episode")
    shown = episode.display_record(agent.atlas)
    assert shown["what happened"] == "episode created from 2 memories"
    assert shown["memories"] == 2 and shown["session"] == "s1"
    assert shown["result"] == f"episode memory {episode.node_id}"
    assert shown["texts"] == "user: " + FACTS[0] + " | user: " + FACTS[1]
    assert forget.display_record()["result"] == "tombstoned (kept for audit)"
    assert rule_rows(buffered(buffer), session_id="other") == []


def test_texts_preview_is_short_and_counts_the_rest() -> None:
    agent, _ = played()
    ids = [n.id for n in agent.atlas.nodes()]
    assert texts(agent.atlas, ids, limit=1)[-1] == f"+{len(ids) - 1} more"


def test_undo_brings_soft_deleted_memories_back_once() -> None:
    agent, buffer = played()
    forget, episode = rule_rows(buffered(buffer))
    (gone,) = forget.source_ids
    assert agent.atlas.get(gone).status is MemoryStatus.TOMBSTONED
    assert undo_forget(agent.atlas, episode) == []  # only soft deletes can be undone
    assert undo_forget(agent.atlas, forget) == [gone]
    assert agent.atlas.get(gone).status is MemoryStatus.ACTIVE
    assert undo_forget(agent.atlas, forget) == []


def test_graph_rings_and_explains_what_rules_touched() -> None:
    agent, buffer = played()
    found = notes(buffered(buffer))
    forget, episode = rule_rows(buffered(buffer))
    assert found[episode.node_id] == "episode created from 2 memories"
    assert found[episode.source_ids[0]] == f"folded into episode {episode.node_id}"
    assert found[forget.source_ids[0]] == "soft-deleted on request: 1 memory"
    node = agent.atlas.get(forget.source_ids[0])
    assert tooltip(node, note=found[node.id]).endswith("rule: soft-deleted on request: 1 memory")
    view = build_graph(agent.atlas.nodes(), agent.atlas.edges(), notes=found)
    assert RULE_BORDER in view.html
    assert RULE_BORDER not in build_graph(agent.atlas.nodes(), agent.atlas.edges()).html
