"""Recorded reads: the optional ``reads`` of atlas-session/1, their replay and agreement@k."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest

from memory_core.embedding.cache import CachedEmbedder
from memory_core.engine.config import AtlasConfig
from memory_core.errors import SessionFormatError
from memory_core.harness.metrics import ConversationResult, ReadOutcome, read_outcome, summarize
from memory_core.harness.policies import Hit
from memory_core.harness.replay import ReplaySettings, conversation_texts, replay_conversation
from memory_core.harness.session_format import conversation_to_dict, parse_conversation

from .conftest import START, conversation_data

TEXTS = [
    "user: My printer is an HP 4100.",
    "assistant: Noted, an HP 4100.",
    "user: I prefer email over phone calls.",
    "user: The office moves to Rotterdam in March.",
]


def at(minutes: float) -> str:
    """START plus ``minutes`` (turns are 60 s apart: turn j at minute j-1)."""
    return (START + timedelta(minutes=minutes)).isoformat()


def recorded(reads: list[dict[str, Any]]) -> dict[str, Any]:
    data = conversation_data([TEXTS], [])
    data["reads"] = reads
    return data


def read(rid: str, minutes: float, returned: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "at": at(minutes),
        "query": "Which printer?",
        "top_k": 2,
        "returned": returned,
        **extra,
    }


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(SessionFormatError) as info:
        parse_conversation(data, "f.json")
    return info.value.problems


def test_reads_load_and_round_trip() -> None:
    data = recorded(
        [read("r1", 1.5, ["s1-t1"]), read("r2", 3, [], session="s1", reinforce=False, top_k=1)]
    )
    conv = parse_conversation(data, "f.json")
    assert conv.reads is not None
    first, second = conv.reads
    assert (first.session, first.top_k, first.returned, first.reinforce) == (
        None,
        2,
        ("s1-t1",),
        True,
    )
    assert (second.session, second.top_k, second.reinforce) == ("s1", 1, False)
    assert parse_conversation(conversation_to_dict(conv), "f.json") == conv
    assert "reads" not in conversation_to_dict(
        parse_conversation(conversation_data([TEXTS], []), "x")
    )


def test_empty_reads_mark_a_recorded_conversation() -> None:
    assert parse_conversation(recorded([]), "f.json").reads == ()
    assert parse_conversation(conversation_data([TEXTS], []), "f.json").reads is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r[1].update(id="r1"), "$.reads[1].id: duplicate read id 'r1'"),
        (lambda r: r[0].update(returned=["s9-t1"]), "$.reads[0].returned[0]: unknown turn id"),
        (lambda r: r[0].update(returned=["s1-t4"]), "said at 2024-07-01T09:03:00+00:00, after"),
        (lambda r: r[0].update(session="s7"), "$.reads[0].session: unknown session id 's7'"),
        (lambda r: r[0].update(query="  "), "$.reads[0].query: query is empty"),
        (lambda r: r[1].update(at=at(0)), "$.reads[1].at: 2024-07-01T09:00:00+00:00 is before"),
        (lambda r: r[0].update(at="yesterday"), "$.reads[0].at: 'yesterday' is not an ISO-8601"),
        (lambda r: r[0].update(top_k=0), "$.reads[0].top_k: 0 is less than the minimum of 1"),
        (lambda r: r[0].update(returned=["s1-t1", "s1-t1"]), "$.reads[0].returned: ["),
        (lambda r: r[0].update(extra=1), "Additional properties are not allowed"),
        (lambda r: r[0].pop("returned"), "'returned' is a required property"),
    ],
)
def test_bad_reads_are_reported_with_their_path(change: Any, expected: str) -> None:
    reads = [read("r1", 1.5, ["s1-t1"]), read("r2", 3, ["s1-t2"])]
    change(reads)
    found = problems(recorded(copy.deepcopy(reads)))
    assert any(expected in p for p in found), found


def test_read_outcome_matches_returned_turns_by_provenance() -> None:
    hits = [Hit("m1", ("t1", "t9"), 1.0), Hit("m2", ("t3",), 0.5)]
    outcome = read_outcome("r1", 5.0, 3, ["t9", "t2", "t3"], hits)
    assert outcome.kept == ("t9", "t3") and outcome.hits == ("m1", "m2")
    assert outcome.agreement == pytest.approx(2 / 3)
    assert read_outcome("r2", 6.0, 3, [], hits).agreement is None
    assert ReadOutcome.from_dict(outcome.to_dict()) == outcome


def _result(reads: tuple[ReadOutcome, ...]) -> ConversationResult:
    return ConversationResult(
        conversation_id="c",
        policy="atlas",
        turns=4,
        max_nodes=None,
        top_k=10,
        facts=(),
        final_nodes=4,
        evictions={},
        wall_seconds=0.1,
        reads=reads,
    )


def test_agreement_pools_memories_over_reads_and_appears_only_with_reads() -> None:
    one = read_outcome("r1", 1.0, 2, ["a", "b"], [Hit("m", ("a",), 1.0)])
    two = read_outcome("r2", 2.0, 2, ["c", "d", "e", "f"], [Hit("m", ("c", "d", "e", "f"), 1.0)])
    empty = read_outcome("r3", 3.0, 2, [], [])
    result = _result((one, two, empty))
    assert result.agreement_at_k == pytest.approx(5 / 6)  # pooled, not the mean of 1/2 and 1
    assert result.metrics()["agreement_at_k"] == pytest.approx(5 / 6)
    assert ConversationResult.from_dict(result.to_dict()) == result
    summary = summarize([result, _result(())])
    assert (summary.agreement_at_k, summary.reads) == (pytest.approx(5 / 6), 3)
    plain = _result(())
    assert "agreement_at_k" not in plain.metrics() and "reads" not in plain.to_dict()
    assert "agreement_at_k" not in summarize([plain]).to_dict()


def test_reads_replay_at_their_times_after_the_turns_said_by_then(
    embedder: CachedEmbedder,
) -> None:
    data = recorded(
        [
            read("r0", -1, []),  # before any turn: an empty memory
            read("r1", 1, ["s1-t1", "s1-t2"], top_k=5),  # a tie with s1-t2: the turn first
            read("r2", 10, ["s1-t4"], top_k=5, reinforce=False),  # after the last turn
        ]
    )
    conv = parse_conversation(data, "f.json")
    assert "Which printer?" in conversation_texts(conv)
    keep = AtlasConfig(session_end_mode="keep")  # no summary among the memories counted below
    replay = replay_conversation(conv, keep, embedder=embedder)
    r0, r1, r2 = replay.result.reads
    assert r0.hits == () and r0.agreement is None
    assert r1.kept == ("s1-t1", "s1-t2") and len(r1.hits) == 2  # two turns said by then
    assert r2.kept == ("s1-t4",) and len(r2.hits) == 4
    assert replay.result.agreement_at_k == 1.0
    # the agent's own reads replace the simulated ones: nothing was read per turn
    counts = {n.provenance[0]: n.access_count for n in replay.policy.atlas.nodes()}  # type: ignore[attr-defined]
    assert counts == {"s1-t1": 1, "s1-t2": 1, "s1-t3": 0, "s1-t4": 0}


def test_conversations_without_reads_replay_as_before(embedder: CachedEmbedder) -> None:
    data = conversation_data([TEXTS], [(["s1-t1"], "Which printer?", "recalled")])
    conv = parse_conversation(data, "f.json")
    with_empty = parse_conversation({**data, "reads": []}, "f.json")
    settings = ReplaySettings(top_k=2)
    plain = replay_conversation(conv, AtlasConfig(), settings=settings, embedder=embedder)
    assert plain.result.reads == ()
    counts = [n.access_count for n in plain.policy.atlas.nodes()]  # type: ignore[attr-defined]
    assert sum(counts) > 0  # simulated reads before each turn
    empty = replay_conversation(with_empty, AtlasConfig(), settings=settings, embedder=embedder)
    assert sum(n.access_count for n in empty.policy.atlas.nodes()) == 0  # type: ignore[attr-defined]
