"""Where the people classifier gets its single words' vectors (``phrase_twin.word_memory``):
MiniLM's float32 vectors on onnxruntime behind a memory of its own when the embedder is
MiniLM, the embedder itself otherwise (so a test's fake embedder is read as before)."""

from __future__ import annotations

import numpy as np
from support.embedders import CallRecordingEmbedder

from memory_core.context.extract.turn import Extractor
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.embedding.minilm import MODEL_NAME
from memory_core.embedding.onnx_minilm import OnnxMiniLM
from memory_core.embedding.phrase_twin import word_memory
from memory_core.embedding.recent import RecentEmbedder


class _NamedMiniLM(HashingEmbedder):
    """A fake that says it is MiniLM (as a cached MiniLM's name does); never run here."""

    @property
    def name(self) -> str:
        return MODEL_NAME


def test_another_embedder_is_read_as_it_is() -> None:
    embedder = HashingEmbedder(64)
    assert word_memory(embedder, 10) is embedder


def test_minilm_gets_a_new_onnxruntime_memory_per_caller() -> None:
    first, second = word_memory(_NamedMiniLM(64), 10), word_memory(_NamedMiniLM(64), 10)
    assert isinstance(first, RecentEmbedder) and first is not second  # no shared warm words
    assert isinstance(first._inner, OnnxMiniLM)  # the session loads on the first embed only


def test_the_extractor_asks_a_fake_embedder_for_its_people_words() -> None:
    recording = CallRecordingEmbedder(HashingEmbedder(64))
    extractor = Extractor(recording)
    extractor.warm_classifiers()
    people = [t for call in recording.calls for t in call if t in ("colleague", "hotel")]
    assert people == ["colleague", "hotel"]  # the people examples, through the given embedder
    assert np.isfinite(extractor._people.vectors()).all()
