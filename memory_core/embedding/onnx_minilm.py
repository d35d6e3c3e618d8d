"""MiniLM run by onnxruntime from the graph derived in ``onnx_export``: the float32 model's
vectors (within 2e-7) at a fraction of torch's fixed cost per call.

Measured on this 2-core Zen 4, one thread, CPU time: one short phrase 2.9-3.3 ms (torch
float32 11-12, its bfloat16 twin 7), three 6-7 ms (15 / 8.8), a 230-character text 13 ms
(22 / 12.5), 64 phrases 180-210 ms (600 / 560). Each call runs on the caller's thread (one
intra-op thread: a live call of a few phrases gains nothing from a second and, when the
other core is busy, pays for waking it); a call of several batches spreads them over
``CALL_THREADS`` threads of its own, which the session allows (``run`` is thread-safe).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from memory_core.embedding.minilm import (
    DIM,
    MODEL_NAME,
    _batches_by_tokens,
    _load_model,
    padded_batch,
)
from memory_core.embedding.onnx_export import INPUTS, graph_path, mean_pooled

NAME = f"{MODEL_NAME}/onnx"
CALL_THREADS = 2
"""Threads a call of more than one batch runs its batches on (a replay's phrases: hundreds
of texts in batches of 64)."""


@functools.cache
def _session() -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: its notes on graph rewrites are not ours
    return onnxruntime.InferenceSession(
        str(graph_path()), options, providers=["CPUExecutionProvider"]
    )


class OnnxMiniLM:
    """MiniLM (mean pooling, unit length) on onnxruntime; thread-safe."""

    __slots__ = ("_batch_size", "_tokenizer_lock")

    def __init__(self, *, batch_size: int = 64) -> None:
        self._batch_size = batch_size
        # the fast tokenizer sets its padding and truncation on every call: one at a time
        self._tokenizer_lock = threading.Lock()

    @property
    def name(self) -> str:
        return NAME

    @property
    def dim(self) -> int:
        return DIM

    def warm(self) -> None:
        """Build or load the graph and open the session now (off a live turn's path)."""
        _session()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = _load_model("cpu")  # for its tokenizer and sequence limit
        out = np.empty((len(texts), DIM), dtype=np.float32)
        batches = _batches_by_tokens(model, texts, self._batch_size)

        def encode(rows: list[int]) -> None:
            out[rows] = self._encode(model, [texts[i] for i in rows])

        if len(batches) == 1:
            encode(batches[0])
        else:
            with ThreadPoolExecutor(CALL_THREADS) as pool:
                list(pool.map(encode, batches))
        return out

    def _encode(self, model: Any, batch: list[str]) -> np.ndarray:
        with self._tokenizer_lock:
            tokens = padded_batch(model, batch, "np")
        hidden = _session().run(None, {name: tokens[name].astype(np.int64) for name in INPUTS})[0]
        return mean_pooled(hidden, tokens["attention_mask"])
