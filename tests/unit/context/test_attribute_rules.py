"""``RuleIndex``: the attribute ruler's matches and writes, checked against spaCy's own
``AttributeRuler`` on a blank pipeline holding the same kinds of rules as the shipped model
(tag maps, lowercase exceptions, ``IN`` / ``NOT_IN`` / ``REGEX``, dependency labels,
spaces, two-token rules writing to either token, a later rule overriding an earlier one)."""

from __future__ import annotations

from typing import Any

import pytest
import spacy
from spacy.language import Language
from spacy.pipeline.attributeruler import AttributeRuler
from spacy.tokens import Doc

from memory_core.context.extract.attribute_rules import RuleIndex, UnsupportedRule, use_rule_index

RULES: list[dict[str, Any]] = [
    {"patterns": [[{"TAG": "NN"}]], "attrs": {"POS": "NOUN", "MORPH": "Number=Sing"}},
    {"patterns": [[{"TAG": "VBD"}]], "attrs": {"POS": "VERB", "MORPH": "Tense=Past"}},
    {"patterns": [[{"TAG": "PRP"}]], "attrs": {"POS": "PRON"}},
    {"patterns": [[{"TAG": "DT"}]], "attrs": {"POS": "DET"}},
    {"patterns": [[{"TAG": "_SP"}]], "attrs": {"POS": "SPACE", "MORPH": "_"}},
    {
        "patterns": [[{"TAG": "VBD", "LOWER": "got"}], [{"TAG": "VBZ", "LOWER": "gets"}]],
        "attrs": {"LEMMA": "get"},
    },
    {"patterns": [[{"LOWER": "i", "DEP": "nsubj"}]], "attrs": {"MORPH": "Case=Nom|Person=1"}},
    {
        "patterns": [[{"LOWER": {"IN": ["it", "you"]}, "DEP": {"IN": ["dobj", "pobj"]}}]],
        "attrs": {"MORPH": "Case=Acc"},
    },
    {
        "patterns": [[{"DEP": {"NOT_IN": ["det", ""]}, "TAG": {"IN": ["DT", "WDT"]}}]],
        "attrs": {"POS": "PRON"},
    },
    {"patterns": [[{"LOWER": {"REGEX": "^n[ou]thin'$"}}]], "attrs": {"LEMMA": "nothing"}},
    {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "go"}},
    {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "to"}, "index": 1},
    {
        "patterns": [[{"DEP": "expl"}, {"LOWER": {"IN": ["is", "'s"]}}]],
        "attrs": {"POS": "VERB"},
        "index": -1,
    },
    {"patterns": [[{"TAG": "_SP", "IS_SPACE": False}]], "attrs": {"POS": "X"}},
    {"patterns": [[{"IS_SPACE": True}]], "attrs": {"TAG": "_SP", "POS": "SPACE"}},
]

WORDS = [
    "I",
    "got",
    "nothin'",
    "gon",
    "na",
    "see",
    "it",
    " ",
    "there",
    "'s",
    "that",
    "gets",
    "you",
    "nuthin'",
    "Got",
]
TAGS = [
    "PRP",
    "VBD",
    "NN",
    "VBG",
    "TO",
    "VB",
    "PRP",
    "_SP",
    "EX",
    "VBZ",
    "DT",
    "VBZ",
    "PRP",
    "NN",
    "VBD",
]
DEPS = [
    "nsubj",
    "ROOT",
    "dobj",
    "aux",
    "aux",
    "xcomp",
    "dobj",
    "dep",
    "expl",
    "ccomp",
    "nsubj",
    "conj",
    "pobj",
    "dobj",
    "dep",
]


def _ruler(rules: list[dict[str, Any]]) -> tuple[Language, AttributeRuler]:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add_patterns(rules)
    return nlp, ruler


def _doc(nlp: Language, order: list[int]) -> Doc:
    return Doc(
        nlp.vocab,
        words=[WORDS[i] for i in order],
        spaces=[False] * len(order),
        tags=[TAGS[i] for i in order],
        deps=[DEPS[i] for i in order],
        heads=[0] * len(order),
    )


def _readings(doc: Doc) -> list[tuple[str, ...]]:
    return [(t.tag_, t.pos_, str(t.morph), t.lemma_) for t in doc]


ORDERS = [
    list(range(len(WORDS))),
    list(reversed(range(len(WORDS)))),
    [3, 4, 4, 3, 4, 8, 9, 9, 0, 1],
    [7],
    [],
]


@pytest.mark.parametrize("order", ORDERS)
def test_matches_and_writes_as_spacys_ruler(order: list[int]) -> None:
    nlp, ruler = _ruler(RULES)
    index = RuleIndex(
        [rule["patterns"] for rule in ruler.patterns],
        [nlp.vocab.strings[str(n)] for n in range(len(RULES))],
        ruler.attrs,
        ruler.indices,
    )
    expected_doc, doc = _doc(nlp, order), _doc(nlp, order)
    assert index.match(doc) == ruler.match(expected_doc)
    ruler(expected_doc)
    index.set_annotations(doc, index.match(doc))
    assert _readings(doc) == _readings(expected_doc)


def test_installed_ruler_gives_spacys_readings() -> None:
    nlp, ruler = _ruler(RULES)
    expected = [_readings(ruler(_doc(nlp, order))) for order in ORDERS]
    assert use_rule_index(nlp)
    assert [
        _readings(nlp.get_pipe("attribute_ruler")(_doc(nlp, order))) for order in ORDERS
    ] == expected


@pytest.mark.parametrize(
    "rule",
    [
        {"patterns": [[{"ORTH": "Got"}]], "attrs": {"LEMMA": "get"}},
        {"patterns": [[{"LOWER": {"FUZZY": "got"}}]], "attrs": {"LEMMA": "get"}},
    ],
)
def test_a_rule_it_cannot_read_leaves_spacys_ruler(rule: dict[str, Any]) -> None:
    nlp, ruler = _ruler([*RULES, rule])
    match = ruler.match
    assert not use_rule_index(nlp)
    assert ruler.match == match


def test_an_index_outside_the_pattern_is_refused() -> None:
    with pytest.raises(UnsupportedRule, match="index 2"):
        RuleIndex([[[{"LOWER": "gon"}, {"LOWER": "na"}]]], [0], [{}], [2])


def test_a_pipeline_without_a_ruler_is_left_alone() -> None:
    assert not use_rule_index(spacy.blank("en"))
