"""The default judge with the real MiniLM on a chatty multi-sentence memory, one sentence of
which a later statement contradicts (docs/conflicts.md, "Long texts read by sentence")."""

from __future__ import annotations

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.conflicts import make_judge
from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.guard import ConflictGuard
from memory_core.embedding.minilm import MiniLMEmbedder

pytestmark = [pytest.mark.integration]

NURSE = (
    "Thanks for asking! The kids are fine and the garden is finally blooming. "
    "I work as a nurse at the city hospital, mostly night shifts. We should catch up soon."
)
CONCERTS = (
    "Hey, long time no see! My brother got married in June and the party lasted until 3am. "
    "I have never been to a concert in my life, crowds scare me. Let's grab lunch next week."
)


CAP = (
    "Yes, from Amsterdam. And the whole trip has to stay under 5,000 euros, that's the cap "
    "my department gave me."
)
HOTEL = (
    "For the hotel I want something I can walk to the fair from. "
    "I don't want to depend on the U-Bahn at 8 am with a trade-fair crowd."
)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_the_contradicted_sentence_is_found_named_and_highlighted(embedder: MiniLMEmbedder) -> None:
    newer = "I work as a software engineer at a startup."
    whole = make_judge(embedder=embedder, by_sentence=False).judge(NURSE, newer)
    assert whole.label == "unrelated"  # the turn's vector is far from the reply's
    verdict = make_judge(embedder=embedder).judge(NURSE, newer)  # by sentence by default
    assert verdict.is_contradiction, verdict.reason
    assert "sentence 3/4 of the older text" in verdict.reason
    highlighted = {s.side: s.text for s in verdict.spans}
    assert "nurse" in highlighted["a"] and "software engineer" in highlighted["b"]


@pytest.mark.parametrize(
    "newer",
    [
        "My brother works as a software engineer at a startup.",  # someone else
        "Before nursing school I worked as a software engineer.",  # another time
        "The night shifts at the hospital are long but I like my patients.",  # more detail
    ],
)
def test_other_people_times_and_details_stay_compatible(
    embedder: MiniLMEmbedder, newer: str
) -> None:
    judge = make_judge(embedder=embedder, by_sentence=True)
    assert not judge.judge(NURSE, newer).is_contradiction


def test_the_guard_acts_on_a_long_memory_one_sentence_of_which_is_contradicted(
    embedder: MiniLMEmbedder,
) -> None:
    decided: dict[bool, list[str]] = {}
    for by_sentence in (False, True):
        atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=embedder, clock=ManualClock(1.7e9))
        guard = ConflictGuard(atlas, make_judge(embedder=embedder, by_sentence=by_sentence))
        user = {"user_id": "ana"}
        old = guard.add(CONCERTS, session_id="day1", metadata=user).node
        assert old is not None
        result = guard.settled(  # with the second look's decisions
            guard.add(
                "I go to a rock concert almost every month.", session_id="day2", metadata=user
            )
        )
        decided[by_sentence] = [d.existing_id for d in result.decisions]
        if by_sentence:
            assert decided[True] == [old.id]
    assert decided[False] == []  # read whole, the turn contradicts nothing


@pytest.mark.parametrize(
    ("older", "newer"),
    [  # trip-approval turns whose sentences the quick look alone called contradictions
        (
            "Second class is fine but please get me a seat in the quiet zone. "
            "I'll be on calls otherwise.",
            "Then do the hotel first, please.",
        ),  # cosine 0.22: under the candidate gate
        (
            "That's fine, I can work on the train. Oh, and whenever you send a booking or a "
            "quote, please always cc finance-travel@lumenworks.eu.",
            "For the hotel I want something I can walk to the fair from. "
            "I don't want to depend on the U-Bahn at 8 am with a trade-fair crowd.",
        ),  # 0.41, pair model 0.65: the cross-encoder overrules it (0.01)
        (CAP, HOTEL),  # pair model 0.81 on the cap / U-Bahn sentences: read in context (below)
    ],
)
def test_sentences_of_task_chat_pass_the_gates_whole_pairs_pass(
    embedder: MiniLMEmbedder, older: str, newer: str
) -> None:
    verdict = make_judge(embedder=embedder).judge(older, newer)
    assert not verdict.is_contradiction, verdict.reason


def test_a_sentence_finding_with_nothing_in_common_is_confirmed_on_the_whole_texts(
    embedder: MiniLMEmbedder,
) -> None:
    """The cap and the U-Bahn share no word, value or slot: the pair model's sure 0.81 on
    the two sentences goes to the cross-encoder, which reads them and the two turns
    (docs/conflicts.md, eighth pass)."""
    judge = make_judge(embedder=embedder)
    inner = getattr(judge, "inner", None)
    assert isinstance(inner, ClaimJudge)
    cap, bahn = CAP.split(". ", 1)[1], HOTEL.split(". ", 1)[1]
    vectors = embedder.embed([cap, bahn])
    similarity = float(vectors[0] @ vectors[1])
    quick = inner.first_look(cap, bahn, similarity)
    assert quick.verdict.is_contradiction and not quick.open  # alone: sure, no second look
    look = inner.first_look(cap, bahn, similarity, context=(CAP, HOTEL))
    assert look.open and look.verdict.is_contradiction
    assert not inner.second_look([look])[0].is_contradiction
