"""Issue #25's cases with the real MiniLM model: a few personal facts, then a flood of
templated machine lines under a memory budget; every fact must stay held and come first
for its plain question."""

from __future__ import annotations

import pytest

from benchmarks.flood_recall import SHAPES, Fact, Scenario, flood, run_scenario
from memory_core import AtlasConfig, MiniLMEmbedder

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_espresso_and_penicillin_survive_150_status_updates(embedder: MiniLMEmbedder) -> None:
    facts = (
        Fact(
            "drink",
            "The user's favourite drink is a double espresso.",
            "What coffee does the user like to drink?",
        ),
        Fact(
            "penicillin",
            "The user is allergic to penicillin.",
            "Is the user allergic to any medicine?",
        ),
        Fact(
            "city",
            "The user grew up in Porto and still supports FC Porto.",
            "Which city is the user from?",
        ),
    )
    lines = [
        f"Status update {n}: the nightly build number {n} finished with {n % 7} warnings."
        for n in range(17, 167)
    ]
    scenario = Scenario(
        "status updates",
        lines,
        facts=facts,
        sessions=(("s1", ("city",)), ("s2", ("drink", "penicillin"))),
    )
    result = run_scenario(scenario, AtlasConfig(max_nodes=60), embedder)
    assert [(f.fact_id, f.held, f.rank) for f in result.facts] == [
        ("drink", True, 1),
        ("penicillin", True, 1),
        ("city", True, 1),
    ]


def test_peanut_allergy_ranks_first_after_200_ci_heartbeat_and_sensor_lines(
    embedder: MiniLMEmbedder,
) -> None:
    facts = (
        Fact(
            "peanuts",
            "I am allergic to peanuts and carry an EpiPen everywhere.",
            "What food allergy do I have?",
        ),
        Fact(
            "sister", "My sister lives in Montreal with her two kids.", "Where does my sister live?"
        ),
    )
    scenario = Scenario(
        "mixed",
        flood("mixed CI, heartbeats, sensors", 200, seed=7),
        facts=facts,
        sessions=(("s1", ("peanuts", "sister")),),
    )
    result = run_scenario(scenario, AtlasConfig(max_nodes=60), embedder)
    assert [(f.fact_id, f.held, f.rank) for f in result.facts] == [
        ("peanuts", True, 1),
        ("sister", True, 1),
    ]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_flood_shape_keeps_every_fact_at_rank_one(
    embedder: MiniLMEmbedder, shape: str
) -> None:
    result = run_scenario(Scenario(shape, flood(shape)), AtlasConfig(max_nodes=60), embedder)
    missed = [(f.fact_id, f.held, f.rank, f.top) for f in result.facts if not f.held or f.rank != 1]
    assert missed == []
