"""The long-text judge: which sentence pairs it judges, and how their verdicts make the pair's.

The wrapped judge is a scripted fake (``ScriptedJudge``: a verdict per pair of texts, every
call recorded) and sentences are embedded by the hashing embedder, so these tests check the
split, the choice and the aggregation, not a model; ``tests/integration/conflicts/
test_long_texts_minilm.py`` runs the real judge. The hashing embedder's cosines say nothing
of topic, so the candidate gate is off (``OFF``) but where a test is about it, and there
the vectors are set by hand (``FixedEmbedder``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memory_core import HashingEmbedder
from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.detector import MIN_SIMILARITY, DetectorConfig
from memory_core.conflicts.judge import JUDGES, make_judge
from memory_core.conflicts.long_texts import SentenceJudge, TwoLookSentenceJudge, read_by_sentence
from memory_core.conflicts.verdict import BaseJudge, FirstLook, Span, TwoLookJudge, Verdict
from memory_core.errors import ConfigError

UNRELATED = Verdict("unrelated", 0.02, "no shared topic")
OFF = -1.0
"""A candidate gate every sentence pair passes."""
TURN = "Hey, long week. The kids are fine. I work as a nurse at the city hospital."
NEWER = "I work as a software engineer."


class ScriptedJudge(BaseJudge):
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

    def __init__(
        self,
        script: dict[tuple[str, str], Verdict],
        opened: set[tuple[str, str]],
        quick: dict[tuple[str, str], Verdict] | None = None,
    ):
        super().__init__(script)
        self.opened = opened
        self.quick = quick or {}
        self.batches: list[list[tuple[str, str]]] = []

    def first_look(
        self,
        a: str,
        b: str,
        similarity: float | None = None,
        *,
        context: tuple[str, str] | None = None,
    ) -> FirstLook:
        final = self.judge(a, b, similarity)
        if (a, b) not in self.opened:
            return FirstLook(a, b, final)
        unsure = self.quick.get((a, b), Verdict("compatible", 0.1, "unsure"))
        return FirstLook(a, b, unsure, open=True, state=final)

    def second_look(self, looks: Sequence[FirstLook]) -> list[Verdict]:
        self.batches.append([(look.a, look.b) for look in looks if look.open])
        return [look.state if look.open else look.verdict for look in looks]


class FixedEmbedder(HashingEmbedder):
    """The hashing embedder, but for the texts given a unit vector by hand."""

    def __init__(self, fixed: dict[str, Sequence[float]]) -> None:
        super().__init__(len(next(iter(fixed.values()))))
        self.fixed = {
            t: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for t, v in fixed.items()
        }

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        hashed = super().embed(texts)
        return np.stack([self.fixed.get(t, h) for t, h in zip(texts, hashed, strict=True)])


def judge_over(
    script: dict[tuple[str, str], Verdict], *, min_similarity: float = OFF, **options: int
) -> SentenceJudge:
    return SentenceJudge(
        ScriptedJudge(script),
        embedder=HashingEmbedder(64),
        min_similarity=min_similarity,
        **options,
    )


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


def test_make_judge_reads_the_claim_judge_by_sentence_unless_told_not_to() -> None:
    embedder = HashingEmbedder(64)
    for wrapped in (make_judge(embedder=embedder), make_judge("claims", by_sentence=True)):
        assert isinstance(wrapped, TwoLookSentenceJudge)
        assert isinstance(wrapped.inner, ClaimJudge) and wrapped.name == "claims"
    assert isinstance(make_judge("claims", embedder=embedder, by_sentence=False), ClaimJudge)
    no_model = make_judge("claims", slots=False, by_sentence=True)
    assert isinstance(no_model, ClaimJudge)  # no model to pick the sentence pairs


def test_make_judge_reads_nli_by_sentence_only_when_told_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(JUDGES, "nli", lambda **options: ScriptedJudge({}))  # no NLI model
    assert isinstance(make_judge("nli"), ScriptedJudge)
    assert isinstance(make_judge("nli", by_sentence=True), SentenceJudge)


def test_the_wrapper_reports_the_second_looks_of_the_judge_it_wraps() -> None:
    inner = ClaimJudge(embedder=HashingEmbedder(64))
    assert SentenceJudge(inner).second_looks == inner.second_looks == 0
    assert SentenceJudge(ScriptedJudge({})).second_looks == 0  # a judge without a second look


NURSE = "I work as a nurse at the city hospital."


def two_looks(
    opened: set[tuple[str, str]], quick: dict[tuple[str, str], Verdict] | None = None
) -> tuple[TwoLookSentenceJudge, ScriptedTwoLookJudge]:
    found = Verdict("contradiction", 0.7, "job changed")
    inner = ScriptedTwoLookJudge({(NURSE, NEWER): found}, opened, quick)
    judge = read_by_sentence(inner, embedder=HashingEmbedder(64), min_similarity=OFF)
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


def test_an_open_sentence_pair_the_quick_look_clears_gets_no_second_look() -> None:
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


def test_an_open_sentence_contradiction_is_confirmed_by_the_second_look() -> None:
    quick = {(NURSE, NEWER): Verdict("contradiction", 0.6, "pair model p=0.60")}
    judge, inner = two_looks({(NURSE, NEWER)}, quick)
    look = judge.first_look(TURN, NEWER)
    assert look.open and look.verdict.is_contradiction  # the quick answer, to be confirmed
    (verdict,) = judge.second_look([look])
    assert verdict.reason.startswith("job changed") and "sentence 3/3" in verdict.reason
    assert inner.batches == [[(NURSE, NEWER)]]  # the whole pair was settled: not read again


def test_an_open_sentence_contradiction_the_second_look_overrules_is_no_contradiction() -> None:
    quick = {(NURSE, NEWER): Verdict("contradiction", 0.6, "pair model p=0.60")}
    judge, inner = two_looks({(NURSE, NEWER)}, quick)
    inner.script[(NURSE, NEWER)] = Verdict("compatible", 0.1, "second look: no")
    verdict = judge.judge(TURN, NEWER)
    assert verdict.label == "compatible" and "second look: no" in verdict.reason


def test_a_sure_whole_contradiction_leaves_open_sentence_pairs_unread() -> None:
    quick = {(NURSE, NEWER): Verdict("contradiction", 0.6, "pair model p=0.60")}
    judge, inner = two_looks({(NURSE, NEWER)}, quick)
    inner.script[(TURN, NEWER)] = Verdict("contradiction", 0.9, "whole")
    look = judge.first_look(TURN, NEWER)
    assert not look.open and look.verdict.reason == "whole"
    assert inner.batches == []


def test_a_sentence_pair_under_the_candidate_gate_is_not_judged() -> None:
    older = "I live in Lyon. I'll be on calls otherwise."
    newer = "I moved to Ghent."
    embedder = FixedEmbedder(
        {
            "I live in Lyon.": [1.0, 0.0, 0.0],
            "I'll be on calls otherwise.": [0.0, 1.0, 0.0],
            newer: [0.6, 0.25, 0.76],  # cosine 0.6 with Lyon, 0.25 with the calls
        }
    )
    judge = SentenceJudge(ScriptedJudge({}), embedder=embedder)  # the detector's gate, 0.3
    judge.judge(older, newer)
    parts = scripted(judge).calls[1:]
    assert [(a, b) for a, b, _ in parts] == [("I live in Lyon.", newer)]
    assert parts[0][2] == pytest.approx(0.6, abs=1e-3)


def test_the_candidate_gate_is_the_detectors() -> None:
    assert DetectorConfig().min_similarity == MIN_SIMILARITY
    judge = SentenceJudge(ScriptedJudge({}), embedder=HashingEmbedder(64), min_similarity=0.9)
    judge.judge(TURN, NEWER)
    assert len(scripted(judge).calls) == 1  # no hashed sentence pair is that close: whole only


@pytest.mark.parametrize(
    "sentence", ["What's the rule again, when can I fly?", "Please book me the 9 am train."]
)
def test_a_question_or_a_request_does_not_decide_alone(sentence: str) -> None:
    older = f"I live in Lyon. {sentence}"
    newer = "I always fly to Ghent."
    flagged = Verdict("contradiction", 0.8, "learned")
    judge = judge_over({(sentence, newer): flagged})
    assert not judge.judge(older, newer).is_contradiction


@pytest.mark.parametrize("bad", [-1.5, 2, True, "0.3"])
def test_min_similarity_must_be_a_cosine(bad: object) -> None:
    with pytest.raises(ConfigError, match="min_similarity"):
        SentenceJudge(ScriptedJudge({}), min_similarity=bad)  # type: ignore[arg-type]


class ScriptedPieceJudge(ScriptedTwoLookJudge):
    """The two-look scripted judge keeping each first look given a ``context``."""

    def __init__(self, script: dict[tuple[str, str], Verdict], opened: set[tuple[str, str]]):
        super().__init__(script, opened)
        self.pieces: list[tuple[str, str, tuple[str, str]]] = []

    def first_look(
        self,
        a: str,
        b: str,
        similarity: float | None = None,
        *,
        context: tuple[str, str] | None = None,
    ) -> FirstLook:
        if context is not None:
            self.pieces.append((a, b, context))
        return super().first_look(a, b, similarity)


def test_sentence_pairs_are_looked_at_in_the_context_of_their_texts() -> None:
    inner = ScriptedPieceJudge({(NURSE, NEWER): Verdict("contradiction", 0.7, "job")}, set())
    judge = read_by_sentence(inner, embedder=HashingEmbedder(64), min_similarity=OFF)
    assert isinstance(judge, TwoLookSentenceJudge)
    verdict = judge.judge(TURN, NEWER)
    assert verdict.is_contradiction and "sentence 3/3" in verdict.reason
    assert inner.pieces and {context for _, _, context in inner.pieces} == {(TURN, NEWER)}
    assert (NURSE, NEWER, (TURN, NEWER)) in inner.pieces
    assert (TURN, NEWER) not in [(a, b) for a, b, _ in inner.pieces]  # the whole: no context
