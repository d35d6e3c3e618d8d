"""The orchestrator's rules with the real MiniLM model: forget requests recognised by
meaning (paraphrases in, reminders out), corrections counted from what the real conflict
guard supersedes, and an episode folded in a long session."""

from __future__ import annotations

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock, MemoryKind, MemoryStatus
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.agent.loop import TurnLoop
from memory_core.agent.memory import GuardedMemory
from memory_core.agent.rules import NOTHING_TO_FORGET, Orchestrator
from memory_core.conflicts import make_judge
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.policy import Resolution
from memory_core.embedding.minilm import default_embedder

pytestmark = pytest.mark.integration

# phrasings that are not the detector's own examples
REQUESTS = [
    "Scratch that, please don't keep it.",
    "Ignore what I told you a second ago.",
    "Can you forget what I just told you?",
]
NOT_REQUESTS = [
    "Huh. So the memory thing was a red herring.",  # the nearest miss in the sample sessions
    "Don't forget to book the train to Hamburg.",
    "I keep forgetting my keys at the office.",
    "Please remember this: I am vegetarian.",
    "What did I just say about the budget?",
    "Let's forget about the hotel and take the train instead.",
]


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return default_embedder()


def agent_with(embedder, **config: object) -> MemoryAgent:  # type: ignore[no-untyped-def]
    atlas = ElasticMemoryAtlas(
        AtlasConfig(**config),  # type: ignore[arg-type]
        embedder=embedder,
        clock=ManualClock(1.7e9),
    )
    return MemoryAgent(atlas, session_id="s1", settings=AgentSettings(remember="everything"))


@pytest.mark.parametrize("request_text", REQUESTS)
def test_paraphrased_requests_soft_delete_the_last_thing_said(embedder, request_text: str) -> None:  # type: ignore[no-untyped-def]
    agent = agent_with(embedder)
    kept = agent.observe("The project deadline is Friday.", metadata={"speaker": "user"}).stored
    said = agent.observe("My salary is 85,000 euros.", metadata={"speaker": "user"}).stored
    assert kept is not None and said is not None
    step = agent.step(request_text)
    assert step.forgotten == (said.id,)
    assert agent.atlas.get(said.id).status is MemoryStatus.TOMBSTONED
    assert agent.atlas.get(kept.id).status is MemoryStatus.ACTIVE


@pytest.mark.parametrize("text", NOT_REQUESTS)
def test_reminders_and_statements_about_forgetting_are_stored(embedder, text: str) -> None:  # type: ignore[no-untyped-def]
    agent = agent_with(embedder)
    agent.observe("The project deadline is Friday.", metadata={"speaker": "user"})
    step = agent.step(text)
    assert step.forgotten == () and step.stored is not None


def test_forget_that_in_a_fresh_session_changes_nothing(embedder) -> None:  # type: ignore[no-untyped-def]
    agent = agent_with(embedder)
    assert agent.step("Forget what I just said.").response == NOTHING_TO_FORGET
    assert len(agent.atlas) == 0


def test_three_corrections_through_the_real_guard_go_to_review(embedder) -> None:  # type: ignore[no-untyped-def]
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=embedder, clock=ManualClock(1.7e9))
    loop = TurnLoop(GuardedMemory(ConflictGuard(atlas, make_judge())), rules=Orchestrator(atlas))
    fired = []
    for ram in (16, 32, 64, 128):
        done = loop.store(f"The server has {ram} GB of RAM.", session_id="ops")
        assert done.stored is not None
        if ram > 16:
            assert [d.resolution for d in done.stored.decisions] == [Resolution.SUPERSEDE]
        fired.append([e.message for e in done.rules])
    assert fired == [
        [],
        [],
        [],
        ["due for knowledge review after 3 corrections (no knowledge base attached)"],
    ]


def test_a_long_session_folds_its_oldest_memories_into_an_episode(embedder) -> None:  # type: ignore[no-untyped-def]
    # near-identical notes would merge into one memory, and notes differing only in
    # numbers fold as one family (issue #25): the test is about the count, so every note
    # differs in its words
    agent = agent_with(embedder, episode_after_memories=50, merge_threshold=1.0)
    filers = ("Ana", "Bo", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ivo")
    topics = ("billing", "login", "export", "search", "upload", "backup")
    notes = [f"{filer} filed a ticket about {topic}." for filer in filers for topic in topics]
    for note in notes[:51]:
        agent.observe(note)
    episodes = [n for n in agent.atlas.nodes("s1") if n.kind is MemoryKind.EPISODIC]
    assert len(episodes) == 1
    assert episodes[0].metadata["folds"] == 50
    rules = agent.loop.rules
    assert rules is not None and len(rules.short_term("s1")) == 1
