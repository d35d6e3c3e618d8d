"""The long-text judge: which sentence pairs it judges, and how their verdicts make the pair's.

The wrapped judge is a scripted fake (``ScriptedJudge``: a verdict per pair of texts, every
call recorded) and sentences are embedded by the hashing embedder, so these tests check the
split, the choice and the aggregation, not a model; ``tests/integration/conflicts/
test_long_texts_minilm.py`` runs the real judge.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memory_core import HashingEmbedder
from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.judge import make_judge
from memory_core.conflicts.long_texts import SentenceJudge, TwoLookSentenceJudge, read_by_sentence
from memory_core.conflicts.verdict import FirstLook, Span, TwoLookJudge, Verdict
from memory_core.errors import ConfigError

UNRELATED = Verdict("unrelated", 0.02, "no shared topic")
TURN = "Hey, long week. The kids are fine. I work as a nurse at the city hospital."
NEWER = "I work as a software engineer."


class ScriptedJudge:
    """A judge that answers from a script by ``(a, b)`` (unrelated otherwise) and records
    every call, its read-aheads and its primed texts."""

    def __init__(self, script: dict[tuple[str, str], Verdict]) -> None:
        self.script = script
        self.calls: list[tuple[str, str, float | None]] = []
        self.read: list[list[tuple[str, str, float]]] = []
        self.primed: list[str] = []

    @property
    def name(self) -> str:
        return "scripted"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        self.calls.append((a, b, similarity))
        return self.script.get((a, b), UNRELATED)

    def read_ahead(self, pairs: Sequence[tuple[str, str, float]]) -> None:
        self.read.append(list(pairs))

    def prime(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.primed += texts


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return super().embed(texts)


class ScriptedTwoLookJudge(ScriptedJudge):
    """The scripted judge with two looks: a pair of ``opened`` is open, its first look
    compatible and its second the scripted verdict; every second-look batch is recorded."""

    def __init__(self, script: dict[tuple[str, str], Verdict], opened: set[tuple[str, str]]):
        super().__init__(script)
        self.opened = opened
        self.batches: list[list[tuple[str, str]]] = []

    def first_look(self, a: str, b: str, similarity: float | None = None) -> FirstLook:
        final = self.judge(a, b, similarity)
        if (a, b) not in self.opened:
            return FirstLook(a, b, final)
        return FirstLook(a, b, Verdict("compatible", 0.1, "unsure"), open=True, state=final)

    def second_look(self, looks: Sequence[FirstLook]) -> list[Verdict]:
        self.batches.append([(look.a, look.b) for look in looks if look.open])
        return [look.state if look.open else look.verdict for look in looks]


def judge_over(script: dict[tuple[str, str], Verdict], **options: int) -> SentenceJudge:
    return SentenceJudge(ScriptedJudge(script), embedder=HashingEmbedder(64), **options)


def scripted(judge: SentenceJudge) -> ScriptedJudge:
    inner = judge.inner
    assert isinstance(inner, ScriptedJudge)
    return inner


def test_two_one_sentence_texts_are_judged_whole_only() -> None:
    said = Verdict("contradiction", 0.9, "job changed", "value_change")
    judge = judge_over({("I am a nurse.", NEWER): said})
    assert judge.judge("I am a nurse.", NEWER, 0.4) == said
    assert scripted(judge).calls == [("I am a nurse.", NEWER, 0.4)]


def test_one_contradicted_sentence_makes_the_pair_a_contradiction_named_and_placed() -> None:
    nurse = "I work as a nurse at the city hospital."
    spans = (Span("a", 12, 17, "nurse"), Span("b", 12, 29, "software engineer"))
    found = Verdict(
        "contradiction", 0.7, "job changed: 'nurse' -> 'software engineer'", spans=spans
    )
    judge = judge_over({(nurse, NEWER): found})
    verdict = judge.judge(TURN, NEWER)
    assert verdict.label == "contradiction" and verdict.score == 0.7
    assert verdict.reason.startswith("job changed")
    assert "sentence 3/3 of the older text" in verdict.reason
    assert "sentence 1/1 of the newer" in verdict.reason
    assert [
        TURN[s.start : s.end] if s.side == "a" else NEWER[s.start : s.end] for s in verdict.spans
    ] == [
        "nurse",
        "software engineer",
    ]


def test_a_whole_contradiction_scoring_higher_stands() -> None:
    nurse = "I work as a nurse at the city hospital."
    whole = Verdict("contradiction", 0.9, "whole")
    judge = judge_over({(TURN, NEWER): whole, (nurse, NEWER): Verdict("contradiction", 0.6, "p")})
    assert judge.judge(TURN, NEWER) == whole


def test_a_related_sentence_pair_makes_an_unrelated_whole_compatible() -> None:
    nurse = "I work as a nurse at the city hospital."
    judge = judge_over({(nurse, NEWER): Verdict("compatible", 0.1, "same topic")})
    verdict = judge.judge(TURN, NEWER)
    assert verdict.label == "compatible"
    assert "same topic; sentence 3/3" in verdict.reason


def test_no_sentence_pair_says_anything_and_the_whole_verdict_stands() -> None:
    judge = judge_over({})
    assert judge.judge(TURN, NEWER) == UNRELATED
    judged = scripted(judge).calls
    assert judged[0] == (TURN, NEWER, None)
    assert {(a, b) for a, b, _ in judged[1:]} == {
        ("Hey, long week.", NEWER),
        ("The kids are fine.", NEWER),
        ("I work as a nurse at the city hospital.", NEWER),
    }


def test_the_sentence_pairs_are_bounded_closest_first_and_carry_their_cosine() -> None:
    older = "I love cats. The weather is bad. My car is red. Soup is nice."
    newer = "My car is red. I hate cats."
    judge = judge_over({}, max_pairs=2)
    judge.judge(older, newer)
    parts = scripted(judge).calls[1:]
    assert len(parts) == 2
    assert parts[0][:2] == ("My car is red.", "My car is red.")
    assert parts[0][2] == pytest.approx(1.0)
    first, second = parts[0][2], parts[1][2]
    assert first is not None and second is not None and second <= first


def test_sentences_that_say_nothing_are_not_judged() -> None:
    judge = judge_over({})
    judge.judge("Oh ok! Yes. I live in Lyon.", "I moved to Ghent last year. Yeah.")
    parts = {(a, b) for a, b, _ in scripted(judge).calls[1:]}
    assert parts == {("I live in Lyon.", "I moved to Ghent last year.")}


def test_a_sentence_that_names_no_one_does_not_decide_alone() -> None:
    older = "Back in college I used to live on coffee. Slept four hours a night."
    newer = "I sleep nine hours every night."
    flagged = Verdict("contradiction", 0.8, "number changed")
    judge = judge_over({("Slept four hours a night.", newer): flagged})
    assert judge.judge(older, newer) == UNRELATED


def test_a_sentence_with_its_own_subject_decides_alone() -> None:
    older = "My brother moved to Oslo last year. I live in Lyon."
    newer = "I live in Ghent."
    flagged = Verdict("contradiction", 0.8, "place changed")
    judge = judge_over({("I live in Lyon.", newer): flagged})
    assert judge.judge(older, newer).is_contradiction


def test_read_ahead_hands_the_wrapped_judge_whole_and_sentence_pairs_in_one_call() -> None:
    judge = judge_over({})
    judge.read_ahead([(TURN, NEWER, 0.3), ("I am here.", "I am there.", 0.5)])
    (batch,) = scripted(judge).read
    assert batch[:2] == [(TURN, NEWER, 0.3), ("I am here.", "I am there.", 0.5)]
    assert {(a, b) for a, b, _ in batch[2:]} == {
        ("Hey, long week.", NEWER),
        ("The kids are fine.", NEWER),
        ("I work as a nurse at the city hospital.", NEWER),
    }


def test_sentences_are_embedded_once_and_primed_texts_not_at_all() -> None:
    embedder = CountingEmbedder()
    judge = SentenceJudge(ScriptedJudge({}), embedder=embedder)
    judge.prime(embedder.name, [NEWER], embedder.embed([NEWER]))
    embedder.texts.clear()
    judge.judge(TURN, NEWER)
    judge.judge(TURN, NEWER)
    assert sorted(embedder.texts) == sorted(
        ["Hey, long week.", "The kids are fine.", "I work as a nurse at the city hospital."]
    )
    assert NEWER in scripted(judge).primed  # the wrapped judge has what the caller had


def test_sentences_are_embedded_as_the_speaker_says_them() -> None:
    embedder = CountingEmbedder()
    judge = SentenceJudge(ScriptedJudge({}), embedder=embedder)
    judge.judge("User's son is five. User lives in Lyon.", "I live in Ghent.")
    assert "my son is five." in embedder.texts and "I lives in Lyon." in embedder.texts


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_max_pairs_must_be_a_positive_whole_number(bad: object) -> None:
    with pytest.raises(ConfigError, match="max_pairs"):
        SentenceJudge(ScriptedJudge({}), max_pairs=bad)  # type: ignore[arg-type]


def test_make_judge_reads_the_model_judges_by_sentence_when_told_to() -> None:
    embedder = HashingEmbedder(64)
    wrapped = make_judge("claims", embedder=embedder, by_sentence=True)
    assert isinstance(wrapped, SentenceJudge) and isinstance(wrapped.inner, ClaimJudge)
    assert wrapped.name == "claims"
    assert isinstance(make_judge("claims", embedder=embedder), ClaimJudge)  # off by default
    no_model = make_judge("claims", slots=False, by_sentence=True)
    assert isinstance(no_model, ClaimJudge)  # no model to pick the sentence pairs


NURSE = "I work as a nurse at the city hospital."


def two_looks(opened: set[tuple[str, str]]) -> tuple[TwoLookSentenceJudge, ScriptedTwoLookJudge]:
    found = Verdict("contradiction", 0.7, "job changed")
    inner = ScriptedTwoLookJudge({(NURSE, NEWER): found}, opened)
    judge = read_by_sentence(inner, embedder=HashingEmbedder(64))
    assert isinstance(judge, TwoLookSentenceJudge) and isinstance(judge, TwoLookJudge)
    return judge, inner


def test_an_open_whole_pair_leaves_the_long_pair_open_and_parts_keep_their_quick_look() -> None:
    judge, inner = two_looks({(NURSE, NEWER), (TURN, NEWER)})
    inner.script[(TURN, NEWER)] = Verdict("contradiction", 0.9, "whole, second look")
    look = judge.first_look(TURN, NEWER)
    assert look.open and not look.verdict.is_contradiction  # the quick answer: nothing yet
    (verdict,) = judge.second_look([look])
    assert verdict.reason == "whole, second look"
    assert inner.batches == [[(TURN, NEWER)]]  # the sentence pair was not given a second look
    assert judge.judge(TURN, NEWER) == verdict


def test_an_open_sentence_pair_alone_is_settled_by_its_quick_look() -> None:
    judge, inner = two_looks({(NURSE, NEWER)})
    look = judge.first_look(TURN, NEWER)
    assert not look.open and not look.verdict.is_contradiction
    assert judge.judge(TURN, NEWER) == look.verdict
    assert inner.batches == []


def test_a_long_pair_with_nothing_open_is_settled_at_the_first_look() -> None:
    judge, _ = two_looks(set())
    look = judge.first_look(TURN, NEWER)
    assert not look.open and look.verdict.is_contradiction
    assert judge.second_look([look]) == [look.verdict]


def test_the_second_look_keeps_looks_of_short_pairs_and_long_pairs_apart() -> None:
    short = ("I am a nurse.", "I am a chef.")
    judge, inner = two_looks({short, (TURN, NEWER)})
    inner.script[short] = Verdict("contradiction", 0.8, "job changed")
    looks = [judge.first_look(*short), judge.first_look(TURN, NEWER), judge.first_look(*short)]
    verdicts = judge.second_look(looks)
    assert verdicts[0].reason == verdicts[2].reason == "job changed"
    assert "sentence 3/3" in verdicts[1].reason  # the sentence pair's quick look decided
    assert inner.batches == [[short, (TURN, NEWER), short]]


def test_a_judge_with_one_look_is_wrapped_without_two() -> None:
    judge = read_by_sentence(ScriptedJudge({}), embedder=HashingEmbedder(64))
    assert not isinstance(judge, TwoLookJudge)
