"""The entity route with the real MiniLM embedder and English pipeline: a question that
names an entity reaches a memory that mentions it (through the order that references it)
but is otherwise unlike the question, which plain retrieval leaves out."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.embedding.minilm import default_embedder

pytestmark = pytest.mark.integration

AT = datetime(2024, 7, 21, 9, tzinfo=UTC).timestamp()
QUESTION = "What colour did I pick for my iPhone 15?"
COURIER = "Your order ORD-20240721-889 ships by standard courier."
FILLERS = (
    "My old phone screen cracked again last week.",
    "Is the iPhone 14 still worth buying?",
    "Where is the nearest phone repair shop?",
    "I lost my phone charger at the airport.",
    "Can you compare phone cameras for me?",
    "My phone keeps losing signal at home.",
)


def test_a_named_entity_reaches_a_memory_that_mentions_it_but_is_otherwise_unlike() -> None:
    config = AtlasConfig(entity_route=True)  # off by default (docs/context.md)
    atlas = ElasticMemoryAtlas(config, embedder=default_embedder(), clock=ManualClock(AT))
    agent = MemoryAgent(atlas, session_id="s1", settings=AgentSettings(remember="everything"))
    agent.step("Check where my iPhone 15 I ordered yesterday is")
    courier = agent.observe(COURIER, metadata={"speaker": "assistant"}).stored
    for filler in FILLERS:
        agent.observe(filler)
    assert courier is not None
    assert agent.loop.entities is not None
    hints = agent.loop.entities.hints(QUESTION)
    assert (
        courier.id in hints
    )  # the order references the iPhone 15; the courier turn names the order

    def top(k: int) -> list[str]:
        hits = agent.loop.recall(QUESTION, session_id="s1", top_k=k, reinforce=False)
        return [h.node.id for h in hits]

    with_route = top(5)
    atlas.reconfigure(replace(atlas.config, entity_route=False))
    without = top(5)
    assert courier.id in with_route
    assert courier.id not in without
    # everything else the route kept in place: it adds the hinted memory, it does not
    # reorder the memories that were closer to the question
    assert [i for i in with_route if i != courier.id] == without[:4]
