"""MiniLM on onnxruntime (``embedding.onnx_minilm``) from the graph this project derives
(``embedding.onnx_export``): the float32 model's vectors however the texts are batched, a
graph that is built once, with no warning leaking, and the phrase twin that sends a live
turn's small calls to it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.embedders import CallRecordingEmbedder

from memory_core.embedding import bfloat16, onnx_export, onnx_minilm, phrase_twin
from memory_core.embedding.minilm import MiniLMEmbedder

pytestmark = pytest.mark.integration

TEXTS = [
    "Thanks!",
    "make it SF Express cash on delivery",
    "an aisle seat please",
    "yes",
    "We have rooms at 120 and suites at 210 per night, which one? The room",
    "cancel the add-on",
    "rent ceiling",
    "a very long turn about the trip " * 60,  # past the 256 word pieces MiniLM reads
]


def test_derived_in_a_fresh_folder_once_without_warnings(tmp_path: Path) -> None:
    # pytest turns any warning into an error: the exporter's own must stay inside
    path = onnx_export.ensure_graph(tmp_path)
    assert path.parent == tmp_path and path.stat().st_size > 80_000_000
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    modified = path.stat().st_mtime_ns
    assert onnx_export.ensure_graph(tmp_path) == path
    assert path.stat().st_mtime_ns == modified


def test_vectors_are_the_float32_models_in_their_own_rows() -> None:
    runner = onnx_minilm.OnnxMiniLM(batch_size=3)  # three batches on two threads
    together = runner.embed(TEXTS)
    alone = np.stack([runner.embed([text])[0] for text in TEXTS])
    torch_vectors = MiniLMEmbedder().embed(TEXTS)
    assert together.shape == (len(TEXTS), 384)
    assert np.abs(together - torch_vectors).max() < 1e-5
    assert np.abs(alone - torch_vectors).max() < 1e-5
    assert runner.embed([]).shape == (0, 384)


def test_the_twin_sends_a_small_call_to_onnxruntime_and_a_large_one_to_bfloat16() -> None:
    small = CallRecordingEmbedder(onnx_minilm.OnnxMiniLM())
    large = CallRecordingEmbedder(bfloat16.BFloat16MiniLM())
    twin = phrase_twin.PhraseTwin(small=small, large=large)
    few, many = TEXTS[:2], TEXTS[:5]
    assert phrase_twin.padded_tokens(few) <= phrase_twin.SMALL_CALL_TOKENS
    assert phrase_twin.padded_tokens(many) > phrase_twin.SMALL_CALL_TOKENS
    full = MiniLMEmbedder().embed(many)
    assert np.abs(twin.embed(few) - full[:2]).max() < 1e-5
    assert (np.sum(twin.embed(many) * full, axis=1) > 0.999).all()
    assert small.calls == [few] and large.calls == [many]
