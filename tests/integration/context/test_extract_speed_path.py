"""The extractor's speed path with the real English pipeline and the real MiniLM (issue #24,
point 7): a turn whose vector the caller already has is never embedded again, a turn's
candidate phrases go to the model in one call, the turn before (``reply_to``) is not parsed
twice, the classifiers' examples are embedded at start (``warm``), and none of it changes
what is extracted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.embedders import CallRecordingEmbedder

from memory_core.context import Extractor, warm
from memory_core.context.extract import labels
from memory_core.context.extract.parse import parse
from memory_core.context.replay import TurnInput, graph_json, replay
from memory_core.embedding import phrase_twin
from memory_core.embedding.base import embed_checked
from memory_core.embedding.cache import CachedEmbedder
from memory_core.embedding.minilm import MiniLMEmbedder
from memory_core.embedding.recent import RecentEmbedder
from memory_core.errors import InputError

pytestmark = pytest.mark.integration

TURNS = [
    ("user", "I ordered an iPhone 15 yesterday, order ORD-20240721-889. Where is it?"),
    ("assistant", "It ships by standard courier. Home delivery or a pickup point?"),
    ("user", "Home delivery, thanks. Never mind, make it SF Express cash on delivery"),
    ("user", "And my budget for the hotel is 200 euros max, for 4 people"),
    ("assistant", "Noted: 200 EUR per night for 4."),
]


MINILM = CachedEmbedder(MiniLMEmbedder())
"""Real MiniLM, one cache for the module (each text reaches the model once)."""


def _extractor() -> tuple[Extractor, CallRecordingEmbedder]:
    recording = CallRecordingEmbedder(MINILM)
    extractor = Extractor(recording)
    extractor.warm_classifiers()
    recording.calls.clear()
    return extractor, recording


def _facts(facts: Any) -> list[Any]:
    return [(f.intent, f.goal, f.slots, f.entities, f.forget_topic) for f in facts]


def _texts(examples: dict[str, tuple[str, ...]]) -> list[str]:
    return [text for texts in examples.values() for text in texts]


def test_a_live_turn_with_its_vector_embeds_only_its_phrases_in_one_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    phrases = CallRecordingEmbedder(phrase_twin.PhraseTwin())  # where phrases go
    monkeypatch.setattr(phrase_twin, "_memory", RecentEmbedder(phrases, capacity=1_000))
    extractor, recording = _extractor()
    reference, _ = _extractor()
    phrases.calls.clear()
    text = TURNS[2][1]
    vector = embed_checked(recording.inner, [text])[0]
    given = extractor.extract(text, vector=vector, reply_to=TURNS[1][1])
    model = phrases
    assert text not in recording.texts() + phrases.texts()
    assert len(model.calls) == 1  # the candidate phrases, together
    assert _facts([given]) == _facts([reference.extract(text, reply_to=TURNS[1][1])])


def test_a_replay_with_the_turn_vectors_embeds_no_turn_and_builds_the_same_graph() -> None:
    turns = [TurnInput(str(i), s, t) for i, (s, t) in enumerate(TURNS)]
    extractor, recording = _extractor()
    reference, _ = _extractor()
    vectors = embed_checked(recording.inner, [t.text for t in turns])
    given, _ = replay(turns, extractor, vectors=vectors)
    assert not set(recording.texts()) & {t.text for t in turns}
    expected, _ = replay(turns, reference)
    assert graph_json(given) == graph_json(expected)


def test_warm_at_start_leaves_the_first_turn_no_example_to_embed() -> None:
    examples = {
        text
        for group in (
            labels.INTENT_EXAMPLES,
            labels.GOAL_EXAMPLES,
            labels.SLOT_EXAMPLES,
            labels.COMMAND_EXAMPLES,
            labels.PEOPLE_EXAMPLES,
        )
        for text in _texts(group)
    }
    always = {t for g in (labels.INTENT_EXAMPLES, labels.GOAL_EXAMPLES) for t in _texts(g)}
    text, before = TURNS[3][1], TURNS[2][1]
    vector = embed_checked(MINILM, [text])[0]
    for warmed in (False, True):
        model = CallRecordingEmbedder(MiniLMEmbedder())  # what reaches the model
        embedder = CachedEmbedder(model)  # the agent's embedder, behind its cache
        if warmed:
            warm(embedder)  # at start, as the dashboard and ``atlas mcp`` do
            model.calls.clear()
        Extractor(embedder).extract(text, vector=vector, reply_to=before)  # the first turn
        reached = examples & set(model.texts())
        if warmed:
            assert not reached
        else:  # every turn is classified by intent and goal: their examples at least
            assert reached >= always


def test_the_turn_before_is_parsed_once() -> None:
    parsed: list[str] = []

    def counting(text: str) -> Any:
        parsed.append(text)
        return parse(text)

    extractor = Extractor(MINILM, parser=counting)
    extractor.extract(TURNS[1][1], speaker="assistant")
    extractor.extract(TURNS[2][1], reply_to=TURNS[1][1])
    assert parsed == [TURNS[1][1], TURNS[2][1]]


def test_a_wrong_vector_is_refused_with_its_shape() -> None:
    extractor, _ = _extractor()
    for bad in (np.zeros(5, np.float32), np.full(384, np.nan, np.float32)):
        with pytest.raises(InputError, match="vector"):
            extractor.extract(TURNS[0][1], vector=bad)
    with pytest.raises(InputError, match=r"2 row\(s\) of 384"):
        extractor.extract_many([(TURNS[0][1], "user", None)] * 2, np.zeros((3, 384), np.float32))


def test_a_text_longer_than_the_parser_reads_is_embedded_by_its_clip() -> None:
    extractor, recording = _extractor()
    long = "I want a hotel under 180 EUR per night. " * 80
    extractor.extract(long, vector=embed_checked(recording.inner, [long])[0])
    assert long[:2_000] in recording.texts()


def test_fast_pipeline_parses_as_spacy_built_it() -> None:
    """The loaded pipeline multiplies through ``TorchGemmOps``, matches its attribute
    rules through a ``RuleIndex`` and remembers its lemmas (``LemmaMemo``: the batched pass
    reads the lemmas the one-at-a-time pass kept); a second copy of the package as spaCy builds it (BLIS,
    ``Matcher``) parses the same texts to the same tags, parts of speech, morphology,
    lemmas, arcs and entities, one at a time and batched."""
    import importlib

    from memory_core.context.extract.attribute_rules import RuleIndex
    from memory_core.context.extract.lemma_memo import LemmaMemo
    from memory_core.context.extract.parse import MODEL_PACKAGE, pipeline
    from memory_core.context.extract.torch_gemm import TorchGemmOps

    def layers(nlp: Any) -> list[Any]:
        return [
            layer for _, c in nlp.pipeline if getattr(c, "model", None) for layer in c.model.walk()
        ]

    nlp = pipeline()
    plain = importlib.import_module(MODEL_PACKAGE).load()
    assert layers(nlp) and all(isinstance(layer.ops, TorchGemmOps) for layer in layers(nlp))
    assert not any(isinstance(layer.ops, TorchGemmOps) for layer in layers(plain))
    assert isinstance(nlp.get_pipe("attribute_ruler").match.__self__, RuleIndex)
    assert not isinstance(
        getattr(plain.get_pipe("attribute_ruler").match, "__self__", None), RuleIndex
    )
    assert isinstance(nlp.get_pipe("lemmatizer").lemmatize, LemmaMemo)
    assert not isinstance(plain.get_pipe("lemmatizer").lemmatize, LemmaMemo)

    def reading(doc: Any) -> list[tuple[str, ...]]:
        return [
            (t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_, str(t.head.i), t.ent_iob_, t.ent_type_)
            for t in doc
        ]

    texts = [text for _, text in TURNS] + [
        "I ain't gonna pay that, y'all. Nothin' changed.",
        "C'm on, let's go!\n\n There's a 9am flight I got.",
        "",
        "😀😀 <b>markup</b>",
        "She orders, they ordered, we were ordering: the orders and the better, best offers.",
    ]
    assert [reading(nlp(t)) for t in texts] == [reading(plain(t)) for t in texts]
    assert [reading(d) for d in nlp.pipe(texts)] == [reading(d) for d in plain.pipe(texts)]


def _reading(doc: Any) -> list[tuple[str, ...]]:
    return [
        (t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_, str(t.head.i), t.ent_iob_, t.ent_type_)
        for t in doc
    ] + [(e.text, e.label_) for e in doc.ents]


def test_entities_recognised_beside_the_phrases_give_the_docs_of_a_plain_parse() -> None:
    """The recognizer beside the syntax (``parse_overlapped``): ``meanwhile`` gets the
    syntax (tags, lemmas, arcs), the result is the whole parse that ``parse`` gives."""
    from memory_core.context.extract.parse import parse_overlapped

    texts = [text for _, text in TURNS] + ["", "😀😀 <b>markup</b>"]
    seen: list[list[tuple[str, str, str]]] = []

    def syntax(doc: Any) -> None:
        seen.append([(t.tag_, t.lemma_, t.dep_) for t in doc])

    docs = [parse_overlapped(text, syntax) for text in texts]
    assert [_reading(d) for d in docs] == [_reading(parse(t)) for t in texts]
    assert seen == [[(t.tag_, t.lemma_, t.dep_) for t in d] for d in docs]


def test_an_error_beside_the_entities_is_raised_once_they_are_in() -> None:
    from memory_core.context.extract.parse import parse_overlapped

    def failing(doc: Any) -> None:
        raise ValueError("phrases")

    with pytest.raises(ValueError, match="phrases"):
        parse_overlapped(TURNS[0][1], failing)
    doc = parse_overlapped(TURNS[0][1], lambda d: None)  # the helper thread is free again
    assert [e.text for e in doc.ents] == [e.text for e in parse(TURNS[0][1]).ents]


def test_a_pipeline_that_does_not_end_with_its_recognizer_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    import spacy

    from memory_core.context.extract import parse as parse_module

    blank = SimpleNamespace(load=lambda: spacy.blank("en"))  # a package without its recognizer
    monkeypatch.setattr(parse_module, "importlib", SimpleNamespace(import_module=lambda _: blank))
    with pytest.raises(parse_module.ParserUnavailable, match="entity recognizer"):
        parse_module._load()
