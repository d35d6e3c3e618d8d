"""Feature extraction: tokens with offsets, cues, typed values, stems."""

from __future__ import annotations

import pytest

from memory_core.conflicts.features import clauses, extract, sentences, stem


@pytest.mark.parametrize(
    ("words", "same"),
    [
        (("run", "runs", "running"), True),
        (("hike", "hiking"), True),
        (("allergic", "allergies"), True),
        (("flight", "flying"), True),
        (("tea", "team"), False),
    ],
)
def test_stem_folds_inflections_and_variants(words: tuple[str, ...], same: bool) -> None:
    assert (len({stem(w) for w in words}) == 1) is same


@pytest.mark.parametrize(
    ("text", "kind", "value", "surface"),
    [
        ("Our budget is $8,000.", "money", "8000", "$8,000"),
        ("Rent is 1200 euros.", "money", "1200", "1200 euros"),
        ("Standup at 9:30.", "time", "9:30", "9:30"),
        ("Backup runs at 2 am.", "time", "2am", "2 am"),
        ("Threshold is 80%.", "percent", "80", "80%"),
        ("Due on March 14.", "date", "march 14", "March 14"),
        ("Flying on the 12th.", "date", "12", "12th"),
        ("Meeting on Tuesdays.", "day", "tuesday", "Tuesdays"),
        ("A table for four people.", "number:peopl", "4", "four people"),
        ("I moved to Berlin.", "name", stem("berlin"), "Berlin"),
        ("I use VS Code daily.", "name", f"{stem('vs')} {stem('code')}", "VS Code"),
        ("Book an aisle seat.", "slot:seat", stem("aisle"), "aisle"),
    ],
)
def test_typed_values_with_offsets(text: str, kind: str, value: str, surface: str) -> None:
    values = [v for v in extract(text).values if v.kind == kind]
    assert [v.text for v in values] == [value]
    assert text[values[0].start : values[0].end] == surface


def test_may_is_a_month_only_when_capitalised() -> None:
    assert [v.kind for v in extract("The wedding is in May.").values] == ["date"]
    assert extract("I may be late.").values == ()


def test_sentence_initial_capitals_are_not_names() -> None:
    assert extract("Alice is my lead.").values == ()
    assert [v.text for v in extract("My lead is Alice.").values] == [stem("alice")]


@pytest.mark.parametrize(
    ("text", "negated", "sentiment"),
    [
        ("I like sushi.", False, 1),
        ("I don't like sushi.", True, 1),
        ("I can't stand sushi.", False, -1),
        ("I can't stand sushi, it is bitter.", False, -1),
        ("I'd rather avoid the train.", False, -1),
        ("I no longer eat sushi.", True, 0),
        ("I stopped eating sushi.", True, 0),
        ("I eat sushi.", False, 0),
    ],
)
def test_polarity_and_sentiment(text: str, negated: bool, sentiment: int) -> None:
    features = extract(text)
    assert (features.negated, features.sentiment) == (negated, sentiment)


def test_roles_and_context_exclude_cues_and_values() -> None:
    features = extract("Actually the budget is now 6000.")
    assert {"correction", "change"} <= features.roles
    assert features.context == frozenset({"budget"})
    assert features.cue_spans("correction") == [(0, 8)]


def test_preference_order_and_hypernyms() -> None:
    assert extract("I prefer tea over coffee.").preference == ("tea", stem("coffee"))
    assert extract("I prefer tea.").preference is None
    assert "alcohol" in extract("I drink wine.").topic


def test_topic_classes() -> None:
    assert extract("I like tea.").topics == frozenset({"food"})
    assert "monitoring" in extract("The CPU alert fired.").topics


def test_clauses_keep_offsets_and_numbers_whole() -> None:
    text = "Finished Severance. Now I've started Shogun, and it costs $8,000; 6.5 bar"
    pieces = clauses(text)
    assert [p for _, p in pieces] == [
        "Finished Severance",
        "Now I've started Shogun",
        "and it costs $8,000",
        "6.5 bar",
    ]
    assert all(text[offset : offset + len(piece)] == piece for offset, piece in pieces)


def test_negation_scope_covers_what_follows_and_state_cues_what_precedes() -> None:
    assert extract("It does, as long as there are no lyrics I know.").negated_keys >= {
        stem("lyrics")
    }
    assert stem("long") not in extract("as long as there are no lyrics").negated_keys
    assert stem("p3") in extract("P3 is out of service today.").negated_keys


def test_idioms_negate_nothing() -> None:
    assert not extract("Feeling content today, no idea why.").negated
    assert extract("I have no idea and no time.").negated


def test_actually_corrects_only_when_it_opens_a_clause() -> None:
    assert extract("Actually, book the hotel near the station.").has("correction")
    assert extract("Fine. Actually use Fahrenheit.").has("correction")
    assert not extract("An app that might actually be clever.").has("correction")


def test_corrected_keys_name_what_is_replaced() -> None:
    assert stem("emailing") in extract("Just text me instead of emailing.").corrected_keys


def test_sentences_keep_a_claim_split_over_clauses_together() -> None:
    text = "Return from Zurich instead. And my cap went up: it's 6,000 euros now! OK?"
    pieces = sentences(text)
    assert [p for _, p in pieces] == [
        "Return from Zurich instead",
        "And my cap went up: it's 6,000 euros now",
        "OK",
    ]
    assert all(text[offset : offset + len(piece)] == piece for offset, piece in pieces)
    assert len(clauses(text)) == 4  # the clause split cuts the claim at the colon


def test_rejected_keys_name_what_follows_instead_of() -> None:
    assert extract("Please text me instead of emailing.").rejected_keys == {"email"}
    assert extract("I'd take the bus rather than the train.").rejected_keys == {"train"}
    assert extract("Text me instead.").rejected_keys == frozenset()
