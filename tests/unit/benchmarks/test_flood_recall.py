"""The flood benchmark's mechanics on the hashing embedder (its numbers come from MiniLM
in ``make bench-recall`` and the integration tests)."""

from __future__ import annotations

from benchmarks.flood_recall import (
    FACTS,
    SHAPES,
    SampleCell,
    Scenario,
    flood,
    keep_what_matters,
    misses,
    render,
    run_scenario,
)
from memory_core import AtlasConfig, HashingEmbedder
from memory_core.engine.families import template


def test_every_shape_is_varied_seeded_and_templated() -> None:
    for shape in SHAPES:
        lines = flood(shape, 60)
        assert lines == flood(shape, 60) and lines != flood(shape, 60, seed=1)
        assert len(set(lines)) > (8 if shape == "chit-chat acks" else 30), shape
        if shape != "chit-chat acks":  # machine lines: few templates, many lines each
            assert len({template(line)[0] for line in lines}) <= 12, shape


def test_facts_are_hand_written_in_both_persons_with_distinct_questions() -> None:
    assert len({f.question for f in FACTS}) == len(FACTS)
    assert any(f.statement.startswith(("I ", "I'm", "My ", "We ")) for f in FACTS)
    assert any("The user" in f.statement or "the user" in f.statement for f in FACTS)


def test_a_scenario_scores_held_and_rank_from_provenance() -> None:
    result = run_scenario(
        Scenario("status lines", flood("status lines", 40)),
        AtlasConfig(max_nodes=30, memory_watermark=1.0),
        HashingEmbedder(64),
    )
    assert len(result.facts) == len(FACTS) and result.lines == 40
    assert result.held == sum(f.held for f in result.facts)
    assert all(f.rank is None or f.held for f in result.facts)  # found means held
    table = render([result])
    assert "| status lines | 30 |" in table and f"{result.held}/{len(FACTS)}" in table
    assert len(misses([result])) == sum(not f.held or f.rank != 1 for f in result.facts)
    combined = keep_what_matters(
        [("150 memories", 0.75, 0.9)], [SampleCell(0.25, 0.6, 0.4, 0.7)], [result]
    )
    assert "| LoCoMo dev | 150 memories | 0.750 | 0.90 | |" in combined
    assert "| samples | 25% of turns | 0.600 | 0.70 | 0.400 |" in combined
    assert "| flood: status lines | max_nodes 30 |" in combined
