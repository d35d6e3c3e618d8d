"""The claim judge's slot layer, subjects and marked times, with a fake sentence embedder.

``SlotFakeEmbedder`` puts a text on the axis of the first slot whose marker word it
contains (so "early riser" and "night owl" share the sleep axis, as MiniLM puts them near
each other) plus a per-text component (two texts of one slot are 0.61 apart, below the judge's
paraphrase cosine); texts without a marker get an axis of their own.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pytest

from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.claims import claims
from memory_core.conflicts.slots import SlotReader

MARKERS = {
    "sleep": ("riser", "owl", "night", "dawn", "sleep"),
    "seat": ("seat",),
    "relationship": ("married", "single", "girlfriend"),
}
DIM = 4096


class SlotFakeEmbedder:
    """Deterministic fake: marker words pick the slot axis (see module doc)."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "slot-fake"

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            low = text.lower()
            vector = np.zeros(DIM, dtype=np.float32)
            axis = next(
                (i for i, words in enumerate(MARKERS.values()) if any(w in low for w in words)),
                None,
            )
            own = 8 + zlib.crc32(text.encode()) % (DIM - 8)  # wide: no two texts share one
            if axis is None:
                vector[own] = 1.0
            else:
                vector[axis], vector[own] = 1.0, 0.8
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows)


@pytest.fixture
def judge() -> ClaimJudge:
    return ClaimJudge(embedder=SlotFakeEmbedder())


def test_two_values_of_one_slot_in_other_words_contradict(judge: ClaimJudge) -> None:
    verdict = judge.judge("I'm an early riser, up by 5am.", "Honestly I'm a total night owl.")
    assert verdict.is_contradiction
    assert verdict.kind == "value_change"
    assert verdict.reason.startswith("sleep changed: '")
    assert "night owl" in verdict.reason  # from what to what, in the text's own words
    assert {s.side for s in verdict.spans} == {"a", "b"}


def test_a_shared_value_word_is_the_same_value_said_again(judge: ClaimJudge) -> None:
    verdict = judge.judge("I'm a night owl.", "Night owl here, never asleep before 2.")
    assert not verdict.is_contradiction


def test_assistant_style_memories_are_read_as_the_user(judge: ClaimJudge) -> None:
    assert judge.judge("User prefers a window seat.", "I always book an aisle seat.").kind == (
        "value_change"
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm an early riser.", "My roommate is a night owl."),
        ("User is an early riser.", "User's brother is a night owl."),
        ("I'm married.", "My sister is single."),
    ],
)
def test_another_person_is_another_subject(judge: ClaimJudge, a: str, b: str) -> None:
    assert not judge.judge(a, b).is_contradiction


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I was a night owl until 2015.", "I'm an early riser."),
        ("I used to be a night owl.", "I'm an early riser now."),
    ],
)
def test_a_marked_past_is_no_claim_about_now(judge: ClaimJudge, a: str, b: str) -> None:
    assert not judge.judge(a, b).is_contradiction


@pytest.mark.parametrize(
    ("newer", "changed"),
    [
        ("I sleep in Lisbon now.", True),  # the same slot read on both sides: a new value
        ("The seat in Lisbon was packed.", False),  # another slot: a name said in passing
        ("Which seat in Lisbon is best?", True),  # a question: its slot is what it asks
    ],
)
def test_two_names_are_one_attributes_values_only_in_one_slot(newer: str, changed: bool) -> None:
    judge = ClaimJudge(embedder=SlotFakeEmbedder(), learned=False)
    older = "I always sleep in Leeds."
    verdict = judge.judge(older, newer, 0.9)  # a candidate pair: the slot layer reads it
    assert verdict.is_contradiction is changed
    assert ("name changed: 'Leeds' -> 'Lisbon'" in verdict.reason) is changed
    assert judge.judge(older, newer).is_contradiction  # below the candidate gate: surface only


def test_unrelated_without_a_given_similarity(judge: ClaimJudge) -> None:
    verdict = judge.judge("I bought a new lamp for the study.", "The train leaves at noon.")
    assert verdict.label == "unrelated"


def test_a_given_similarity_is_used_as_is(judge: ClaimJudge) -> None:
    verdict = judge.judge("I bought a new lamp for the study.", "The lamp is blue.", 0.9)
    assert verdict.label == "compatible"


def test_the_reader_embeds_new_texts_once_in_one_batch() -> None:
    embedder = SlotFakeEmbedder()
    reader = SlotReader(embedder)
    reader.read(["I'm a night owl.", "I'm married."])
    calls = len(embedder.calls)  # the texts, then the slot examples (embedded on first use)
    assert embedder.calls.count(["I'm a night owl.", "I'm married."]) == 1
    again = reader.read(["I'm a night owl.", "I'm married."])
    assert len(embedder.calls) == calls  # cached
    assert [r.slot for r in again] == ["sleep", "relationship"]
    reader.read(["I'm a night owl.", "I prefer a window seat."])
    assert embedder.calls[-1] == ["I prefer a window seat."]


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("User lives in Denver.", "i"),
        ("User's brother lives in Austin.", "brother"),
        ("my roommate can't stand cats", "roommate"),
        ("I play chess with my kids.", "i"),
        ("my older brother lives in Oslo", "brother"),
    ],
)
def test_subjects(text: str, subject: str) -> None:
    assert claims(text)[0].subject == subject


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("I lived in Manila until 2015.", True),
        ("I've lived in Toronto since 2016.", False),
        ("I used to smoke.", True),
        ("I'm staying until Friday.", False),
    ],
)
def test_marked_times(text: str, past: bool) -> None:
    assert claims(text)[0].past is past


def test_without_slots_no_model_is_loaded() -> None:
    embedder = SlotFakeEmbedder()
    verdict = ClaimJudge(embedder=embedder, slots=False).judge("I'm a night owl.", "I'm married.")
    assert embedder.calls == []
    assert verdict.label in ("compatible", "unrelated")


def test_primed_vectors_cost_no_model_run() -> None:
    embedder = SlotFakeEmbedder()
    judge = ClaimJudge(embedder=embedder)
    texts = ["I'm an early riser.", "I'm a night owl."]
    vectors = SlotFakeEmbedder().embed(texts)
    judge.prime("another-model", texts, vectors)  # not the reader's model: ignored
    assert embedder.calls == []
    judge.prime("slot-fake", texts, vectors)
    calls = len(embedder.calls)  # the slot examples only
    assert all(call != texts[:1] and call != texts[1:] for call in embedder.calls)
    assert judge.judge(*texts).is_contradiction
    assert len(embedder.calls) == calls  # both texts (one claim each) were primed


def test_a_warmed_judge_reads_nothing_more_for_the_texts_it_was_warmed_with() -> None:
    embedder = SlotFakeEmbedder()
    judge = ClaimJudge(embedder=embedder)
    old, new = "I'm a night owl; I'm married.", "The user is an early riser."
    judge.warm([old, new])
    read = {text for call in embedder.calls for text in call}
    assert {"I'm a night owl", "I is an early riser."} <= read  # a claim, a first-person form
    calls = len(embedder.calls)
    judge.judge(old, new)
    assert len(embedder.calls) == calls


def test_warming_a_judge_without_slots_loads_no_model() -> None:
    embedder = SlotFakeEmbedder()
    ClaimJudge(embedder=embedder, slots=False).warm(["I'm a night owl."])
    assert embedder.calls == []


def test_a_warmed_guard_reads_only_the_new_statement() -> None:
    from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
    from memory_core.conflicts.detector import DetectorConfig
    from memory_core.conflicts.guard import ConflictGuard

    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=HashingEmbedder(64), clock=ManualClock(0.0)
    )
    for text in ("I'm a night owl; I'm married.", "The user's seat is by the window."):
        atlas.add(text, session_id="s")
    embedder = SlotFakeEmbedder()
    everything = DetectorConfig(min_similarity=-1.0)  # every stored memory is judged
    guard = ConflictGuard(atlas, ClaimJudge(embedder=embedder), detector=everything)
    guard.warm()
    calls = len(embedder.calls)
    guard.add("I'm an early riser.", session_id="s")
    guard.settle()  # a pair whose look runs the model is read by the guard's worker
    assert embedder.calls[calls:] == [["I'm an early riser."]]


def test_a_write_reads_all_its_candidate_pairs_in_one_model_call() -> None:
    from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
    from memory_core.conflicts.detector import DetectorConfig
    from memory_core.conflicts.guard import ConflictGuard

    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=HashingEmbedder(64), clock=ManualClock(0.0)
    )
    stored = ("I'm a night owl; I'm married.", "I'm an introvert; I'm single.")
    for text in stored:  # both within the judge's reading cosine of the write
        atlas.add(text, session_id="s")
    embedder = SlotFakeEmbedder()
    judge = ClaimJudge(embedder=embedder)
    judge.warm()  # the slot examples and the judge's own pair, before counting
    everything = DetectorConfig(min_similarity=-1.0)  # every stored memory is judged
    guard = ConflictGuard(atlas, judge, detector=everything)
    calls = len(embedder.calls)
    guard.add("I'm an early riser; I'm single.", session_id="s")
    guard.settle()  # read by the guard's worker, the write's pairs in one batch still
    assert len(embedder.calls) == calls + 1
    assert {"I'm a night owl", "I'm an introvert", "I'm an early riser"} <= set(embedder.calls[-1])
