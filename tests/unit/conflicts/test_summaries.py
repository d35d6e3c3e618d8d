"""Summaries never keep serving a superseded or forgotten memory's claim."""

from __future__ import annotations

from memory_core import ElasticMemoryAtlas
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.policy import Resolution
from memory_core.conflicts.summaries import covering_summaries
from memory_core.engine.model import MemoryKind, MemoryStatus, Relation

FACTS = (
    ("t1", "The budget is 5000 euros."),
    ("t2", "My dog is called Biscuit."),
    ("t3", "I live in Leeds near the park."),
)
ANA = {"user_id": "ana"}
"""The writer of every session here: the guard compares other sessions of the same user."""


def summarized_session(guard: ConflictGuard) -> tuple[dict[str, str], str]:
    """Ids of the three facts by turn, and the id of the session summary covering them."""
    ids = {}
    for turn, text in FACTS:
        node = guard.add(text, session_id="s1", provenance=(turn,), metadata=ANA).node
        assert node is not None
        ids[turn] = node.id
    summary = guard.atlas.summarize_session("s1")
    assert summary is not None and set(summary.provenance) == {"t1", "t2", "t3"}
    return ids, summary.id


def active_summaries(atlas: ElasticMemoryAtlas) -> list[str]:
    return [
        n.id
        for n in atlas.nodes()
        if n.kind is MemoryKind.SUMMARY and n.status is MemoryStatus.ACTIVE
    ]


def test_superseding_a_quoted_memory_reissues_the_summary_without_it(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    ids, old_summary = summarized_session(guard)
    result = guard.add(
        "The budget is now 6000 euros.", session_id="s2", provenance=("t4",), metadata=ANA
    )
    # the member is judged and superseded, not the whole summary
    assert result.ids(Resolution.SUPERSEDE) == [ids["t1"]]
    assert atlas.get(ids["t1"]).status is MemoryStatus.SUPERSEDED
    assert atlas.get(old_summary).status is MemoryStatus.DEPRECATED
    (new_summary,) = active_summaries(atlas)
    node = atlas.get(new_summary)
    assert "5000" not in node.content and "Biscuit" in node.content and "Leeds" in node.content
    assert set(node.provenance) == {"t2", "t3"}
    assert node.session_id == "s1"
    edges = {(e.target_id, e.relation) for e in atlas.edges(new_summary)}
    assert (old_summary, Relation.SUPERSEDES) in edges
    assert {(ids["t2"], Relation.SUMMARIZES), (ids["t3"], Relation.SUMMARIZES)} <= edges
    hits = atlas.retrieve("What is the budget?", top_k=10, reinforce=False)
    assert not any("5000" in h.node.content for h in hits)


def test_forgetting_a_quoted_memory_reissues_the_summary_without_it(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    ids, old_summary = summarized_session(guard)
    result = guard.add("Please forget what I said about my dog.", session_id="s1")
    assert result.ids(Resolution.FORGET) == [ids["t2"]]  # the memory, not the summary
    assert atlas.get(old_summary).status is MemoryStatus.DEPRECATED
    (new_summary,) = active_summaries(atlas)
    assert "Biscuit" not in atlas.get(new_summary).content
    assert covering_summaries(atlas, ids["t2"]) == []


def test_a_summary_left_with_one_memory_is_retired_not_reissued(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    first = guard.add("The budget is 5000 euros.", session_id="s1", metadata=ANA).node
    guard.add("My dog is called Biscuit.", session_id="s1", metadata=ANA)
    summary = atlas.summarize_session("s1")
    assert first is not None and summary is not None
    guard.add("The budget is now 6000 euros.", session_id="s2", metadata=ANA)
    assert atlas.get(summary.id).status is MemoryStatus.DEPRECATED
    assert active_summaries(atlas) == []
