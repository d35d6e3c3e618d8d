"""The entity route (issue #24 point 4) with scripted turn facts and the hashing embedder
(no parser, no model): which memories a question's entities hint, with what score, and
that the agent loop hands them to the atlas."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.agent.context_graph import ContextStage
from memory_core.agent.entity_route import HOP_SHARE, EntityRoute, idf
from memory_core.agent.loop import TurnLoop
from memory_core.agent.memory import AtlasMemory
from memory_core.agent.rules import Orchestrator
from memory_core.context.extract import labels
from memory_core.context.extract.turn import EntityMention, TurnFacts

START = 1_721_563_200.0
NAMES = ("Lisbon", "iPhone 15", "order", "Maria")


class Scripted:
    """An extractor that returns the next prepared facts (the parse is tested elsewhere)."""

    def __init__(self, turns: Sequence[TurnFacts]) -> None:
        self._turns: Iterator[TurnFacts] = iter(turns)

    def extract(self, text: str, **_: Any) -> TurnFacts:
        return next(self._turns)


def named(text: str) -> list[EntityMention]:
    """A fake question reader: the known names the text contains."""
    return [EntityMention(n, "thing") for n in NAMES if n.lower() in text.lower()]


def facts(
    *entities: EntityMention, intent: str = labels.STATE, topic: str | None = None
) -> TurnFacts:
    return TurnFacts(
        "", "user", START, intent, 1.0, None, 0.0, entities=entities, forget_topic=topic
    )


LISBON = EntityMention("Lisbon", "gpe")
PHONE = EntityMention("iPhone 15", "product")
ORDER = EntityMention("order", "order", about=("iPhone 15",))

TURNS = [
    ("a", "Flying to Lisbon in May.", facts(LISBON)),
    ("a", "I ordered an iPhone 15.", facts(PHONE, ORDER)),
    ("a", "The order number is ORD-1.", facts(EntityMention("order", "order"))),
    ("b", "Lisbon again next year.", facts(LISBON)),
    ("b", "Filler about the weather.", facts()),
]


@pytest.fixture
def setup() -> tuple[ElasticMemoryAtlas, EntityRoute, list[str]]:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0, entity_route=True),
        embedder=HashingEmbedder(64),
        clock=ManualClock(START),
    )
    stage = ContextStage(atlas, extractor=Scripted([f for _, _, f in TURNS]))  # type: ignore[arg-type]
    route = EntityRoute(stage, mentions=named)
    ids = []
    for session, text, _ in TURNS:
        memory = atlas.add(text, session_id=session)
        route.observe(text, session_id=session, speaker="user", memory_id=memory.id)
        ids.append(memory.id)
    return atlas, route, ids


def test_a_question_hints_every_memory_naming_its_entity_scored_by_idf(setup: Any) -> None:
    atlas, route, ids = setup
    assert route.hints("Any tips for Lisbon?") == pytest.approx(
        {ids[0]: idf(len(atlas), 2), ids[3]: idf(len(atlas), 2)}
    )


def test_a_memory_one_references_hop_away_gets_a_share(setup: Any) -> None:
    atlas, route, ids = setup
    weight = idf(len(atlas), 1)
    # the phone is named by turn 1; the order that references it also by turn 2
    assert route.hints("Is my iPhone 15 waterproof?") == pytest.approx(
        {ids[1]: weight, ids[2]: HOP_SHARE * weight}
    )


def test_a_speaker_s_name_counts_the_memories_they_said(setup: Any) -> None:
    """ "I" is the speaker: Maria's own turns are about Maria, so her name is as common as
    the memories she said plus those naming her."""
    atlas, route, _ = setup
    stage = route.stage
    stage._extractor = Scripted([facts(EntityMention("Maria", "person")), facts(), facts()])
    asked = atlas.add("Did Maria call back?", session_id="a")
    route.observe("Did Maria call back?", session_id="a", speaker="user", memory_id=asked.id)
    for text in ("Maria: I start the new job Monday.", "Maria: The cat is fine."):
        said = atlas.add(text, session_id="a")
        route.observe(text, session_id="a", speaker="Maria", memory_id=said.id)
    assert route.hints("What did Maria say?") == pytest.approx({asked.id: idf(len(atlas), 3)})


def test_a_rare_name_outweighs_a_common_one() -> None:
    assert idf(100, 1) > idf(100, 10) > idf(100, 90) > 0
    assert idf(10, 50) == idf(10, 10)  # more mentions than memories held: clamped


def test_nothing_is_hinted_when_off_or_unnamed(setup: Any) -> None:
    atlas, route, _ = setup
    assert route.hints("What about the weather?") == {}
    assert route.hints("   ") == {}
    atlas.reconfigure(replace(atlas.config, entity_route=False))
    assert route.hints("Any tips for Lisbon?") == {}
    atlas.reconfigure(replace(atlas.config, entity_route=True, context_graph=False))
    assert route.hints("Any tips for Lisbon?") == {}


def test_a_forgotten_entity_is_hinted_no_more(setup: Any) -> None:
    _, route, ids = setup
    stage = route.stage
    stage._extractor = Scripted([facts(intent=labels.FORGET, topic="Lisbon")])
    route.observe("Forget what I said about Lisbon", session_id="b", speaker="user", memory_id=None)
    assert set(route.hints("Any tips for Lisbon?")) == {ids[0]}  # session a still names it


def test_the_loop_feeds_the_route_and_hands_its_hints_to_the_atlas() -> None:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0, graph_expansion=0, entity_route=True),
        embedder=HashingEmbedder(64),
        clock=ManualClock(START),
    )
    said = [TURNS[1][2], TURNS[2][2], *(facts() for _ in range(30))]
    stage = ContextStage(atlas, extractor=Scripted(said))  # type: ignore[arg-type]
    loop = TurnLoop(AtlasMemory(atlas), entities=EntityRoute(stage, mentions=named))
    first = loop.turn("I ordered an iPhone 15.", session_id="s", top_k=3).done.stored
    order = loop.turn("The order number is ORD-1.", session_id="s", top_k=3).done.stored
    for i in range(30):
        loop.turn(f"filler turn number {i} about nothing", session_id="s", top_k=3)
    assert first is not None and order is not None
    hits = loop.recall("Is my iPhone 15 waterproof?", session_id="s", top_k=40, reinforce=False)
    sources = {h.node.id: h.breakdown.sources for h in hits}
    assert "hint" in sources[first.id] and "hint" in sources[order.id]
    atlas.reconfigure(replace(atlas.config, entity_route=False))
    plain = loop.recall("Is my iPhone 15 waterproof?", session_id="s", top_k=40, reinforce=False)
    assert all("hint" not in h.breakdown.sources for h in plain)


def test_with_rules_the_route_reads_the_orchestrator_s_graph() -> None:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(), embedder=HashingEmbedder(64), clock=ManualClock(START)
    )
    stage = ContextStage(atlas, extractor=Scripted([]))  # type: ignore[arg-type]
    loop = TurnLoop(AtlasMemory(atlas), rules=Orchestrator(atlas, context=stage))
    assert loop.entities is not None and loop.entities.stage is stage
    assert TurnLoop(AtlasMemory(atlas)).entities is None
