"""Which task context graph a turn goes into (issue #24): its user's across that user's
sessions, its session's alone when it names no user (issue #29's rule), two users apart;
a purged session leaves its user's graph as if it had said nothing; held changes follow
the same keys. A scripted extractor stands in for the parser (its facts are what the
sentence says; the parse is tested elsewhere), the embedder is the hashing one."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.agent.context_graph import ContextStage, user_of
from memory_core.agent.entity_route import EntityRoute
from memory_core.agent.loop import TurnLoop
from memory_core.agent.memory import AtlasMemory
from memory_core.agent.rules import Orchestrator
from memory_core.conflicts.detector import USER_KEY, user_metadata
from memory_core.context import EntityMention, NodeType, PendingReview, SlotValue
from memory_core.context.extract import labels
from memory_core.context.extract.turn import TurnFacts
from memory_core.context.query import active_constraints
from memory_core.embedding.base import Embedder

DAY = 1_721_563_200.0


def cap(value: int) -> SlotValue:
    return SlotValue("user", "trip budget", f"{value:,} EUR", "money", float(value), "EUR")


SAID: dict[str, tuple[str, tuple[SlotValue, ...], tuple[EntityMention, ...]]] = {
    "The trip has to stay under 5,000 euros.": (labels.STATE, (cap(5000),), ()),
    "My cap went up: it's 6,000 euros now.": (labels.CHANGE, (cap(6000),), ()),
    "I'm flying to Munich for the fair.": (labels.STATE, (), (EntityMention("Munich", "GPE"),)),
    "They have a table at 9:15, shall I take it?": (
        labels.STATE,
        (SlotValue("assistant", "table time", "9:15", "time"),),
        (),
    ),
    "Yes, take it.": (labels.CONFIRM, (), ()),
    "Forget what I just said.": (labels.FORGET, (), ()),
    "I eat vegetarian.": (
        labels.STATE,
        (SlotValue("user", "meal preference", "vegetarian", topic="meal"),),
        (),
    ),
}


class Scripted:
    """An extractor that reads each sentence as ``SAID`` says (anything else: nothing)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def extract(self, text: str, **kwargs: Any) -> TurnFacts:
        intent, slots, entities = SAID.get(text, (labels.STATE, (), ()))
        return TurnFacts(
            text, kwargs["speaker"], kwargs["at"], intent, 1.0, None, 0.0, slots, entities
        )

    def mentions(self, text: str) -> list[EntityMention]:
        return [m for _, _, found in SAID.values() for m in found if m.label in text]


class World:
    """An atlas, its orchestrator's stage over the scripted extractor, and the loop."""

    def __init__(self, config: AtlasConfig | None = None) -> None:
        self.clock = ManualClock(DAY)
        self.atlas = ElasticMemoryAtlas(
            config or AtlasConfig(memory_watermark=1.0),
            embedder=HashingEmbedder(64),
            clock=self.clock,
        )
        self.stage = ContextStage(self.atlas, extractor=Scripted(self.atlas.embedder))  # type: ignore[arg-type]
        self.rules = Orchestrator(self.atlas, context=self.stage)
        self.loop: TurnLoop[Any, Any] = TurnLoop(AtlasMemory(self.atlas), rules=self.rules)

    def say(self, text: str, session: str, user: str | None = None, speaker: str = "user") -> None:
        self.clock.advance(3600.0)
        metadata = {"speaker": speaker, **user_metadata(user)}
        self.loop.store(text, session_id=session, metadata=metadata)

    def in_force(self, scope: str) -> list[str]:
        graph = self.stage.context(scope).graph
        return sorted(str(n.attr("value")) for n in active_constraints(graph))


def test_the_stage_reads_the_guards_user_key() -> None:
    assert user_of({USER_KEY: "ana"}) == "ana"
    assert user_of({"speaker": "user"}) is None and user_of(None) is None


def test_a_users_cap_set_in_one_session_is_changed_in_another() -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1", "ana")
    world.say("I eat vegetarian.", "s2", "ana")
    world.say("My cap went up: it's 6,000 euros now.", "s3", "ana")
    assert list(world.stage.graphs()) == ["user:ana"]
    assert world.in_force("user:ana") == ["6,000 EUR", "vegetarian"]
    graph = world.stage.context("user:ana").graph
    old = next(
        n
        for n in graph.nodes(NodeType.CONSTRAINT, include_deprecated=True)
        if n.attr("value") == "5,000 EUR"
    )
    assert old.deprecated and graph.origin(old.id) == "s1"
    assert sorted(graph.origin(n.id) or "" for n in active_constraints(graph)) == ["s2", "s3"]
    assert graph.sessions() == ["s1", "s2", "s3"]
    assert world.stage.sessions("user:ana") == ["s1", "s2", "s3"]
    told = world.stage.describe("s3", 200)
    assert "trip budget = 6,000 EUR (replaces 5,000 EUR)" in told
    # a new session of the same user reads the user's graph before it said anything
    assert world.stage.describe("s4", 200, user="ana") == told
    assert world.stage.describe("s4", 200) == ""  # nobody said s4 is ana's


def test_turns_without_a_user_stay_in_their_session() -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1")
    world.say("My cap went up: it's 6,000 euros now.", "s2")
    assert sorted(world.stage.graphs()) == ["session:s1", "session:s2"]
    assert world.in_force("session:s1") == ["5,000 EUR"]  # s2 changed nothing of s1's
    assert world.in_force("session:s2") == ["6,000 EUR"]


def test_a_turn_without_a_user_in_a_users_session_stays_in_the_session() -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1", "ana")
    world.say("My cap went up: it's 6,000 euros now.", "s1")
    assert world.in_force("user:ana") == ["5,000 EUR"]
    assert world.in_force("session:s1") == ["6,000 EUR"]
    assert "5,000 EUR" in world.stage.describe("s1", 200)  # the session reads its user's


@pytest.mark.parametrize("later", ["s1", "s2"])
def test_a_yes_adopts_only_what_was_offered_in_its_own_session(later: str) -> None:
    world = World()
    world.say("They have a table at 9:15, shall I take it?", "s1", "ana", speaker="assistant")
    world.say("Yes, take it.", later, "ana")
    assert world.in_force("user:ana") == (["9:15"] if later == "s1" else [])


@pytest.mark.parametrize("later", ["s1", "s2"])
def test_forget_what_i_just_said_undoes_only_its_own_sessions_change(later: str) -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1", "ana")
    world.say("Forget what I just said.", later, "ana")
    assert world.in_force("user:ana") == ([] if later == "s1" else ["5,000 EUR"])


def test_two_users_are_apart() -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1", "ana")
    world.say("My cap went up: it's 6,000 euros now.", "s2", "bo")
    assert world.in_force("user:ana") == ["5,000 EUR"]
    assert world.in_force("user:bo") == ["6,000 EUR"]
    assert "6,000" not in world.stage.describe("s1", 200)


@pytest.mark.parametrize(
    ("purged", "left", "sessions"),
    [
        ("s3", ["5,000 EUR", "vegetarian"], ["s1", "s2"]),  # the change is undone
        ("s1", ["6,000 EUR", "vegetarian"], ["s2", "s3"]),  # what it set is gone
        ("s2", ["6,000 EUR"], ["s1", "s3"]),
    ],
)
def test_purging_a_session_takes_out_only_what_it_contributed(
    purged: str, left: list[str], sessions: list[str]
) -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1", "ana")
    world.say("I'm flying to Munich for the fair.", "s1", "ana")
    world.say("I eat vegetarian.", "s2", "ana")
    world.say("My cap went up: it's 6,000 euros now.", "s3", "ana")
    held = world.stage.context("user:ana")  # a turn of another session may hold it now
    world.atlas.end_session(purged, mode="purge")
    assert world.stage.context("user:ana") is held  # taken out in place: nothing it writes is lost
    assert world.in_force("user:ana") == left
    graph = world.stage.context("user:ana").graph
    assert graph.sessions() == sessions == world.stage.sessions("user:ana")
    munich = graph.nodes(NodeType.ENTITY, include_deprecated=True, include_soft_deleted=True)
    assert bool(munich) is (purged != "s1")
    memories = {m for n in graph.nodes(include_deprecated=True) for m in n.memories}
    assert not memories & {n.id for n in world.atlas.nodes(purged)}
    world.say("My cap went up: it's 6,000 euros now.", "s4", "ana")  # the graph still works
    assert "6,000 EUR" in world.in_force("user:ana")


def test_purging_the_only_session_of_a_graph_drops_it() -> None:
    world = World()
    world.say("The trip has to stay under 5,000 euros.", "s1")
    world.say("The trip has to stay under 5,000 euros.", "s2", "ana")
    world.atlas.end_session("s1", mode="purge")
    world.atlas.end_session("s2", mode="purge")
    assert world.stage.graphs() == {} and world.stage.sessions() == []
    assert world.stage.describe("s2", 200) == ""


def held_change(world: World) -> PendingReview:
    graph = world.stage.context("user:ana").graph
    (in_force,) = [n for n in active_constraints(graph) if n.attr("slot") == "trip budget"]
    return PendingReview(
        "user", "room cap", "7,000 EUR", in_force.id, "trip budget", "6,000 EUR", 0.7, 1,
        None, (("kind", "money"), ("number", 7000.0), ("unit", "EUR")),
    )  # fmt: skip


def test_a_held_change_is_answered_in_the_users_graph_and_goes_with_its_session() -> None:
    world = World()
    world.say("My cap went up: it's 6,000 euros now.", "s1", "ana")
    world.say("I eat vegetarian.", "s2", "ana")
    world.stage.hold("item-1", "s2", held_change(world), "ana")
    assert world.stage.held()["item-1"].scope == "user:ana"
    assert world.stage.answer("item-1", accept=True) is not None
    graph = world.stage.context("user:ana").graph
    (raised,) = [n for n in active_constraints(graph) if n.attr("slot") == "trip budget"]
    assert raised.attr("value") == "7,000 EUR" and graph.origin(raised.id) == "s2"
    assert world.stage.withdraw("item-1") is True
    assert "6,000 EUR" in world.in_force("user:ana")
    world.atlas.end_session("s2", mode="purge")  # the item's session: its item goes too
    assert world.stage.held() == {} and world.stage.answer("item-1", accept=True) is None


def test_the_entity_route_finds_a_users_entity_from_another_session() -> None:
    world = World(AtlasConfig(memory_watermark=1.0, entity_route=True))
    route = world.loop.entities
    assert isinstance(route, EntityRoute)
    world.say("I'm flying to Munich for the fair.", "s1", "ana")
    said = world.atlas.nodes("s1")[0].id
    assert route.hints("Anything new about Munich?") == {
        said: pytest.approx(route.hints("Munich")[said])
    }
    world.atlas.end_session("s1", mode="purge")
    assert route.hints("Anything new about Munich?") == {}
