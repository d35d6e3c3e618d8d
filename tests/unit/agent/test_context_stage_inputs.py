"""What the agent loop hands the context graph with each turn (issue #24, point 7): the
vector it already computed for the utterance (so the turn is not embedded twice) and, as a
replay does, the other side's turn before it. A recording extractor stands in for the
parser (the parse is tested elsewhere); the embedder is the hashing one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.embedders import CallRecordingEmbedder

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.agent.context_graph import ContextStage
from memory_core.agent.loop import TurnLoop
from memory_core.agent.memory import AtlasMemory
from memory_core.agent.rules import Orchestrator
from memory_core.context.extract import labels
from memory_core.context.extract.turn import TurnFacts
from memory_core.embedding.base import Embedder, embed_checked


class Recording:
    """An extractor that records what each turn came with and finds nothing in it."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.calls: list[dict[str, Any]] = []

    def extract(self, text: str, **kwargs: Any) -> TurnFacts:
        self.calls.append({"text": text, **kwargs})
        return TurnFacts(text, kwargs["speaker"], kwargs["at"], labels.STATE, 0.0, None, 0.0)


def setup(
    embedder: Embedder | None = None,
) -> tuple[ElasticMemoryAtlas, Recording, TurnLoop[Any, Any]]:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0),
        embedder=embedder or HashingEmbedder(64),
        clock=ManualClock(1_721_563_200.0),
    )
    recording = Recording(atlas.embedder)
    stage = ContextStage(atlas, extractor=recording)  # type: ignore[arg-type]
    loop: TurnLoop[Any, Any] = TurnLoop(
        AtlasMemory(atlas), rules=Orchestrator(atlas, context=stage)
    )
    return atlas, recording, loop


def test_a_live_turn_is_read_with_the_other_sides_turn_before_it() -> None:
    _, recording, loop = setup()
    said = [
        ("user", "I need a hotel in Lisbon under 180 EUR"),
        ("assistant", "There are rooms at 150 and 175 EUR, which one?"),
        ("user", "The 150 one."),
        ("user", "Oh and breakfast included."),
    ]
    for speaker, text in said:
        loop.store(text, session_id="s", metadata={"speaker": speaker})
    replies = [call["reply_to"] for call in recording.calls]
    assert replies == [None, said[0][1], said[1][1], None]  # the same speaker again: none


def test_each_session_answers_its_own_turn_before() -> None:
    _, recording, loop = setup()
    loop.store("Book a table for four.", session_id="a", metadata={"speaker": "user"})
    loop.store("Which evening?", session_id="b", metadata={"speaker": "assistant"})
    loop.store("Friday works.", session_id="a", metadata={"speaker": "assistant"})
    assert [c["reply_to"] for c in recording.calls] == [None, None, "Book a table for four."]


def test_the_loop_embeds_a_turn_once_and_hands_the_graph_that_vector() -> None:
    counting = CallRecordingEmbedder(HashingEmbedder(64))
    _, recording, loop = setup(counting)
    text = "switch the delivery to SF Express, cash on delivery"
    loop.turn(text, session_id="s", top_k=3, metadata={"speaker": "user"})
    (call,) = recording.calls
    expected = embed_checked(HashingEmbedder(64), [text])[0]
    assert np.array_equal(call["vector"], expected)
    assert counting.texts().count(text) == 1  # the forget rule and the graph share it


def test_a_detector_or_extractor_over_another_model_never_gets_the_loops_vector() -> None:
    atlas, _, _ = setup()
    other = Recording(HashingEmbedder(32))
    stage = ContextStage(atlas, extractor=other)  # type: ignore[arg-type]
    loop: TurnLoop[Any, Any] = TurnLoop(
        AtlasMemory(atlas), rules=Orchestrator(atlas, context=stage)
    )
    loop.turn("a room for two", session_id="s", top_k=3)
    assert other.calls[0]["vector"] is None  # it embeds the text with its own model


@pytest.mark.parametrize("forget_on_request", [True, False])
def test_no_rule_that_reads_the_utterance_means_no_vector_is_made(forget_on_request: bool) -> None:
    counting = CallRecordingEmbedder(HashingEmbedder(64))
    atlas = ElasticMemoryAtlas(
        AtlasConfig(context_graph=False, forget_on_request=forget_on_request),
        embedder=counting,
        clock=ManualClock(),
    )
    rules = Orchestrator(atlas)
    made = rules.utterance_vector("the hotel cap is 200")
    assert (made is not None) is forget_on_request
    assert rules.utterance_vector("   ") is None
