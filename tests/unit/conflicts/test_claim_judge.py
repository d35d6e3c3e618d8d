"""The offline rule judge: each rule family, hard negatives, errors, and measured quality."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.conflicts import RuleJudge, evaluate, load_pairs
from memory_core.errors import ConfigError, InputError

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def judge() -> RuleJudge:
    return RuleJudge()


def test_seed_example_python_to_go_is_a_contradiction(judge: RuleJudge) -> None:
    verdict = judge.judge("I love Python", "Python is too hard, I switched to Go")
    assert verdict.label == "contradiction"
    assert verdict.score >= 0.5
    assert "python" in verdict.reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I like sushi.", "I don't like sushi."),
        ("The office is open on Saturdays.", "The office is not open on Saturdays."),
        ("I work at Acme Corp.", "I no longer work at Acme Corp."),
        ("We deploy on Fridays.", "We never deploy on Fridays."),
        ("I play chess every weekend.", "I stopped playing chess."),
    ],
)
def test_negation_flip(judge: RuleJudge, a: str, b: str) -> None:
    verdict = judge.judge(a, b)
    assert (verdict.label, verdict.kind) == ("contradiction", "negation")
    assert any(span.side == "b" for span in verdict.spans)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I love jazz music.", "I hate jazz music."),
        ("I enjoy hiking in the mountains.", "I can't stand hiking in the mountains."),
        ("I prefer window seats.", "I avoid window seats."),
        ("I prefer tea over coffee.", "I prefer coffee over tea."),
    ],
)
def test_antonym_preferences(judge: RuleJudge, a: str, b: str) -> None:
    verdict = judge.judge(a, b)
    assert (verdict.label, verdict.kind) == ("contradiction", "antonym")


@pytest.mark.parametrize(
    ("a", "b", "old", "new"),
    [
        ("The budget is 5000.", "The budget is now 6000.", "5000", "6000"),
        ("The hotel costs $180 per night.", "The hotel costs $240 per night.", "$180", "$240"),
        ("My flight lands at 14:30.", "My flight now lands at 16:05.", "14:30", "16:05"),
        (
            "The team meeting is on Tuesday.",
            "The team meeting moved to Thursday.",
            "Tuesday",
            "Thursday",
        ),
        ("My birthday is on June 3.", "My birthday is on July 3.", "June 3", "July 3"),
        ("I live in Paris.", "I live in Rome now.", "Paris", "Rome"),
        ("The server has 32 GB of RAM.", "The server has 64 GB of RAM.", "32 GB", "64 GB"),
        ("The error budget is 0.1%.", "The error budget is 0.5%.", "0.1%", "0.5%"),
        ("I prefer dark mode.", "I prefer light mode.", "dark", "light"),
    ],
)
def test_value_change_names_both_values(
    judge: RuleJudge, a: str, b: str, old: str, new: str
) -> None:
    verdict = judge.judge(a, b)
    assert (verdict.label, verdict.kind) == ("contradiction", "value_change")
    assert f"{old} vs {new}" in verdict.reason
    assert {(s.side, s.text) for s in verdict.spans} == {("a", old), ("b", new)}
    for span in verdict.spans:
        text = a if span.side == "a" else b
        assert text[span.start : span.end] == span.text


def test_value_change_reason_names_the_attribute(judge: RuleJudge) -> None:
    verdict = judge.judge("budget is 5000", "budget is now 6000")
    assert verdict.reason == "same attribute 'budget' with different values 5000 vs 6000"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I prefer travelling by rail.", "Book me a flight instead."),
        ("I want a pepperoni pizza.", "I changed my mind, I want a margherita pizza."),
        ("We use PostgreSQL for the backend.", "We switched to MySQL for the backend."),
        ("I want the hotel near the beach.", "Actually, book the hotel near the station."),
    ],
)
def test_explicit_correction(judge: RuleJudge, a: str, b: str) -> None:
    verdict = judge.judge(a, b)
    assert verdict.label == "contradiction"
    assert verdict.kind in {"correction", "value_change"}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I like tea.", "I also like coffee."),
        ("The CPU alert threshold is 80%.", "The memory alert threshold is 90%."),
        ("My son is 10 years old.", "My son has 2 sisters."),
        ("The gym opens at 6am.", "The gym closes at 10pm."),
        ("I like spicy Thai food.", "I don't like spicy Indian food."),
        ("The kids go to bed at 8pm.", "The kids go to bed at 9pm on weekends."),
        ("I use Linux at home.", "I use macOS at work."),
        ("I'm not a fan of crowded places.", "I avoid crowded places."),
        ("I love jazz music.", "I love jazz music, especially Coltrane."),
    ],
)
def test_hard_negatives_are_compatible(judge: RuleJudge, a: str, b: str) -> None:
    verdict = judge.judge(a, b)
    assert verdict.label == "compatible", verdict.reason
    assert verdict.kind == "none"
    assert verdict.score < 0.5


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I switched to Go.", "I love my new running shoes."),
        ("I like tea.", "The server runs Ubuntu."),
        ("I don't like early meetings.", "My brother plays the drums."),
    ],
)
def test_different_topics_are_unrelated(judge: RuleJudge, a: str, b: str) -> None:
    verdict = judge.judge(a, b)
    assert verdict.label == "unrelated"
    assert verdict.reason == "no shared topic words or topic classes"


def test_similarity_can_make_texts_related(judge: RuleJudge) -> None:
    a, b = "I live in Paris.", "I work near the Louvre."
    assert judge.judge(a, b).label == "unrelated"
    assert judge.judge(a, b, similarity=0.3).label == "unrelated"
    related = judge.judge(a, b, similarity=0.7)
    assert related.label == "compatible"
    assert "embeddings" in related.reason


def test_similarity_lets_a_correction_reach_a_related_topic() -> None:
    judge = RuleJudge(related_similarity=0.6)
    a, b = "I'm learning origami.", "Actually I gave that up and took up calligraphy."
    assert judge.judge(a, b).label == "unrelated"
    assert judge.judge(a, b, similarity=0.65).label == "contradiction"


def test_threshold_controls_the_label_not_the_score() -> None:
    a, b = "I prefer dark mode.", "I prefer light mode."
    lenient, strict = RuleJudge(threshold=0.5), RuleJudge(threshold=0.95)
    assert lenient.judge(a, b).label == "contradiction"
    strict_verdict = strict.judge(a, b)
    assert strict_verdict.label == "compatible"
    assert strict_verdict.score == lenient.judge(a, b).score


def test_is_deterministic_and_fast(judge: RuleJudge) -> None:
    pairs = load_pairs(DATA / "conflict_pairs.jsonl")
    first = [judge.judge(p.a, p.b) for p in pairs]
    start = time.perf_counter()
    second = [RuleJudge().judge(p.a, p.b) for p in pairs]
    elapsed = time.perf_counter() - start
    assert first == second
    assert elapsed / len(pairs) < 0.005  # well under 5 ms a pair even on a slow CI box


@pytest.mark.parametrize(
    ("a", "b", "field", "problem"),
    [
        ("", "x", "a", "is empty"),
        ("x", "   ", "b", "is empty"),
        (None, "x", "a", "expected a string, got NoneType"),
        ("x", 3, "b", "expected a string, got int"),
    ],
)
def test_rejects_bad_texts(
    judge: RuleJudge, a: object, b: object, field: str, problem: str
) -> None:
    with pytest.raises(InputError) as info:
        judge.judge(a, b)  # type: ignore[arg-type]
    assert (info.value.field, info.value.problem) == (field, problem)


@pytest.mark.parametrize("similarity", [1.5, -2.0, float("nan"), "high"])
def test_rejects_bad_similarity(judge: RuleJudge, similarity: object) -> None:
    with pytest.raises(InputError, match="similarity"):
        judge.judge("a cat", "a dog", similarity=similarity)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"threshold": 0.0}, "threshold"),
        ({"threshold": 1.2}, "threshold"),
        ({"related_similarity": 1.5}, "related_similarity"),
    ],
)
def test_rejects_bad_configuration(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        RuleJudge(**kwargs)
    assert info.value.field == field


def test_holdout_meets_the_quality_target() -> None:
    """Regression test of quality on pairs never used to write the rules."""
    report = evaluate(RuleJudge(), load_pairs(DATA / "conflict_pairs_holdout.jsonl"))
    assert report.n >= 60
    assert report.precision >= 0.85, report.mistakes
    assert report.recall >= 0.75, report.mistakes


@pytest.mark.parametrize(
    ("name", "recall"),
    [("conflict_pairs_fresh.jsonl", 0.7), ("conflict_pairs_long_turns.jsonl", 0.9)],
)
def test_unseen_sets_keep_their_measured_quality(name: str, recall: float) -> None:
    """Never tuned on: precision must stay at the target, recall at what was measured
    (fresh 0.72; long turns 0.93, measured once when the file was written)."""
    report = evaluate(RuleJudge(), load_pairs(DATA / name))
    assert report.precision >= 0.85, report.mistakes
    assert report.recall >= recall, report.mistakes


def test_dev_set_quality_does_not_regress() -> None:
    report = evaluate(RuleJudge(), load_pairs(DATA / "conflict_pairs.jsonl"))
    assert report.n >= 90
    assert report.precision >= 0.95, report.mistakes
    assert report.recall >= 0.85, report.mistakes


_WORDS = st.sampled_from(
    [
        "I",
        "you",
        "we",
        "my",
        "the",
        "budget",
        "is",
        "now",
        "not",
        "don't",
        "never",
        "like",
        "hate",
        "prefer",
        "avoid",
        "actually",
        "instead",
        "also",
        "5000",
        "$6,000",
        "9:30",
        "3pm",
        "80%",
        "March",
        "14",
        "Tuesday",
        "Paris",
        "Go",
        "Python",
        "flight",
        "train",
        "window",
        "aisle",
        "dark",
        "light",
        "tea",
        "coffee",
        "no",
        "longer",
        "anymore",
        "switched",
        "stopped",
        "can't",
        "stand",
        ",",
        ".",
        ";",
    ]
)
_TEXTS = st.lists(_WORDS, min_size=1, max_size=14).map(" ".join) | st.text(min_size=1)


@settings(max_examples=300, deadline=None)
@given(a=_TEXTS, b=_TEXTS)
def test_any_text_gets_a_valid_verdict_with_spans_inside_the_texts(a: str, b: str) -> None:
    if not a.strip() or not b.strip():
        return
    verdict = RuleJudge().judge(a, b)
    assert 0.0 <= verdict.score <= 1.0
    assert (verdict.label == "contradiction") == (verdict.score >= 0.5)
    for span in verdict.spans:
        text = a if span.side == "a" else b
        assert 0 <= span.start < span.end <= len(text)
        assert text[span.start : span.end] == span.text


@settings(max_examples=200, deadline=None)
@given(a=_TEXTS)
def test_a_text_never_contradicts_itself(a: str) -> None:
    if a.strip():
        assert RuleJudge().judge(a, a).label != "contradiction"


def test_long_texts_are_compared_clause_by_clause(judge: RuleJudge) -> None:
    a = "Night off tonight, finally. I'm bingeing Severance, halfway through season one."
    b = "Finished Severance. Now I've started Shogun and I'm hooked."
    verdict = judge.judge(a, b)
    assert (verdict.label, verdict.kind) == ("contradiction", "negation")
    assert [(s.side, s.text) for s in verdict.spans] == [("b", "Finished")]
    assert b[verdict.spans[0].start : verdict.spans[0].end] == "Finished"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Fine. Please send me the appointment details by email though.",
            "Let's change it. From now on please just text me instead of emailing.",
        ),
        (
            "Weekday mornings only, before noon.",
            "Any future visits should be afternoons, after 1 pm, not mornings anymore.",
        ),
        ("I'm a wool merchant, just passing through.", "I'll be honest. I'm no merchant."),
    ],
)
def test_supersession_in_conversation_turns(judge: RuleJudge, a: str, b: str) -> None:
    assert judge.judge(a, b).label == "contradiction"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Ten minutes, okay, I'll try that.", "I tried to meditate for fifteen minutes."),
        ("Stayed up late sketching ideas.", "Feeling pretty content today, no idea why."),
        ("Woke up to rain this morning, not the best start.", "Got a new job, we start Monday."),
        ("One for a bus app that might actually be clever.", "The walk to the bus sounds nice."),
    ],
)
def test_conversation_noise_is_not_a_contradiction(judge: RuleJudge, a: str, b: str) -> None:
    assert judge.judge(a, b).label != "contradiction"


def test_a_repeated_memory_is_a_duplicate_not_a_contradiction(judge: RuleJudge) -> None:
    text = "I live in Paris. I don't live in Paris anymore."
    assert judge.judge(text, text).label == "compatible"
    assert judge.judge(text, "I live in Paris.").label == "contradiction"


# -- long turns: sentence pieces, explicit rejections ------------------------------------

CAP_OLD = (
    "Yes, from Amsterdam. And the whole trip has to stay under 5,000 euros, "
    "that's the cap my department gave me."
)
CAP_NEW = (
    "Return from Zurich instead. And because of the extra leg my cap went up: it's 6,000 euros now."
)


def test_a_quantity_change_split_over_clauses_is_found_in_its_sentence(judge: RuleJudge) -> None:
    verdict = judge.judge(CAP_OLD, CAP_NEW)
    assert (verdict.label, verdict.kind) == ("contradiction", "value_change")
    assert "cap" in verdict.reason and "6,000" in verdict.reason
    # the spans point at the two amounts in the whole texts
    assert {s.text for s in verdict.spans} == {"5,000 euros", "6,000 euros"}


def test_a_bare_now_does_not_make_different_names_a_change(judge: RuleJudge) -> None:
    verdict = judge.judge(
        "Django 4.2 on Python 3.11. It runs as a Celery 5.3 task with Redis as the broker.",
        "Yes, I'm putting it in a PR now. CI runs ruff and mypy in strict mode.",
    )
    assert not verdict.is_contradiction


EMAIL = (
    "Fine. Please send me the appointment details by email though, "
    "I never pick up calls from unknown numbers."
)
SMS = (
    "Let's change it. From now on please just text me instead of emailing, "
    "my mobile is the one on the account."
)


def test_a_standing_rejection_of_what_was_said_is_a_sure_correction(judge: RuleJudge) -> None:
    verdict = judge.judge(EMAIL, SMS)
    assert (verdict.label, verdict.kind) == ("contradiction", "correction")
    assert verdict.score == pytest.approx(0.95)
    assert "From now on" in verdict.reason


def test_a_passing_instead_of_is_not_a_sure_correction(judge: RuleJudge) -> None:
    verdict = judge.judge(
        "Listening to some jazz on the radio while I work.",
        "Snacking on toast with jam instead of doing my work.",
    )
    assert verdict.score < 0.95


def test_a_rejection_only_counts_from_the_newer_side(judge: RuleJudge) -> None:
    assert judge.judge(SMS, EMAIL).score < 0.95
