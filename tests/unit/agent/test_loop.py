import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, InputError
from memory_core.agent import AgentSettings, MemoryAgent, RuleBasedResponder
from memory_core.testing import HashingEmbedder, ManualClock


def make_agent(**settings: object) -> MemoryAgent:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(64), clock=ManualClock())
    return MemoryAgent(atlas, session_id="s1", settings=AgentSettings(**settings))  # type: ignore[arg-type]


def test_step_remembers_facts_and_skips_filler() -> None:
    agent = make_agent()
    assert agent.step("ok thanks").stored is None
    stored = agent.step("I prefer rail over air travel", provenance=["t2"]).stored
    assert stored is not None and stored.provenance == ("t2",)
    assert len(agent.atlas) == 1


def test_step_links_new_memory_to_retrieved_ones() -> None:
    agent = make_agent(remember="everything")
    first = agent.step("The project deadline is Friday").stored
    second = agent.step("Move the project deadline to Monday").stored
    assert first is not None and second is not None
    related = {(e.source_id, e.target_id, e.relation.value) for e in agent.atlas.edges(second.id)}
    assert (second.id, first.id, "related_to") in related


def test_context_respects_token_budget_and_format() -> None:
    agent = make_agent(remember="everything", token_budget=12, context_format="timeline")
    for text in ["alpha beta gamma delta epsilon zeta", "alpha beta two", "alpha three"]:
        agent.step(text)
    step = agent.step("alpha")
    assert step.context_tokens <= 12
    assert step.context.startswith("- [")


def test_rule_based_responder_cites_first_memory() -> None:
    agent = make_agent(remember="everything")
    agent.atlas.reconfigure(AtlasConfig(context_graph=False))
    agent.step("My budget is 5000 euros")
    step = agent.step("what is my budget")
    assert step.response is not None and "From memory: My budget is 5000 euros" in step.response
    assert isinstance(agent.llm, RuleBasedResponder)


def test_the_constraint_in_force_comes_first_in_the_context() -> None:
    """With the task context graph (on by default) the responder sees the value in force
    ahead of the recalled memories, and the replaced one only as what it replaced."""
    agent = make_agent(remember="everything")
    agent.step("My budget is 5000 euros")
    agent.step("Actually my budget is 6000 euros")
    step = agent.step("what is my budget")
    assert step.response is not None
    assert "From memory: In force: budget = 6000 euros (replaces 5000 euros)" in step.response
    assert step.context.startswith("Task context (constraints in force):")


def test_end_session_applies_mode() -> None:
    agent = make_agent(remember="everything")
    agent.step("I prefer rail over air travel")
    assert agent.end_session("purge") == 1
    assert len(agent.atlas) == 0
    assert agent.end_session("purge") == 0


def test_bad_settings_name_the_field() -> None:
    with pytest.raises(InputError, match="context_format"):
        AgentSettings(context_format="poem")
    with pytest.raises(InputError, match="remember"):
        AgentSettings(remember="all")
