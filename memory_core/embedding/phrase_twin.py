"""Where the context graph's short phrases and slot names get their MiniLM vectors: the
runner that is cheapest for each part of a call, one memory for the whole process.

A MiniLM batch costs a fixed part (reading the weights, torch's dispatch) plus a part per
padded token. onnxruntime in float32 has the small fixed part, the bfloat16 twin the small
part per token (half the bytes and the CPU's bf16 dot products); measured here, one thread,
CPU time: onnxruntime 2.55 + 0.220 ms per padded token, bf16 6.34 + 0.129, level at ~42
tokens (one 30-token text 9.1 / 9.9 ms; two 30-token texts 15.9 / 14.8; eight 4-token
phrases 11.5 / 12.4). So a call of at most ``SMALL_CALL_TOKENS`` padded tokens (a live
turn's few phrases, its slot names) runs on onnxruntime, a larger one (a replay's hundreds
of phrases, a long turn's, the classifiers' examples at warm-up) in bfloat16. Splitting a
call by length, each part on its cheaper runner, saved nothing on 272 live calls (2.3
texts a call): 1.91-2.12 s CPU against 1.93-2.13.

The two agree to a cosine of 0.9999 (bf16 rounding; onnxruntime equals float32 torch within
2.5e-7), so a phrase embedded by one may be compared with an example embedded by the other:
that changes a decision only for a phrase at a threshold (docs/context.md, sixth pass,
counts them). Without native bf16 every call runs on onnxruntime.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from memory_core.embedding import bfloat16
from memory_core.embedding.base import Embedder
from memory_core.embedding.minilm import DIM, MODEL_NAME, _load_model
from memory_core.embedding.onnx_minilm import OnnxMiniLM
from memory_core.embedding.recent import RecentEmbedder

NAME = f"{MODEL_NAME}/phrases"
SMALL_CALL_TOKENS = 48
"""A call of at most this many tokens, counted as the model runs them (texts x the longest
one's word pieces), runs on onnxruntime: cheaper up to 40 measured, dearer from 60."""
SMALL_CALL_TEXTS = 16
"""More texts than this are never a small call (and are not counted)."""


class PhraseTwin:
    """MiniLM for short texts: onnxruntime (``small``) for small calls, the bfloat16 twin
    (``large``) for the rest; thread-safe."""

    __slots__ = ("_count_tokens", "_large", "_small")

    def __init__(
        self,
        *,
        small: Embedder | None = None,
        large: Embedder | None = None,
        count_tokens: Callable[[Sequence[str]], int] | None = None,
    ) -> None:
        self._small = small or OnnxMiniLM()
        self._large = large or bfloat16.BFloat16MiniLM()
        self._count_tokens = count_tokens or padded_tokens

    @property
    def name(self) -> str:
        return NAME

    @property
    def dim(self) -> int:
        return DIM

    def warm(self) -> None:
        """Load the small calls' runner now (the large one loads on its first call: the
        classifiers' examples at warm-up)."""
        warm = getattr(self._small, "warm", None)
        if warm is not None:
            warm()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        small = len(texts) <= SMALL_CALL_TEXTS and self._count_tokens(texts) <= SMALL_CALL_TOKENS
        return (self._small if small else self._large).embed(texts)


def padded_tokens(texts: Sequence[str]) -> int:
    """Tokens MiniLM runs for ``texts`` in one batch: their count x the longest one's word
    pieces (special tokens in, truncated as the model truncates)."""
    model = _load_model("cpu")
    ids = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length)
    return len(texts) * max((len(row) for row in ids["input_ids"]), default=0)


def phrase_memory(embedder: Embedder, capacity: int) -> RecentEmbedder:
    """Where a classifier of short phrases gets their vectors, beside ``embedder``.

    When ``embedder`` is MiniLM (bare or behind a cache: its name says so): the process's
    one memory of the phrase twin's vectors (the first caller's ``capacity``), so what
    ``warm`` embedded at start is there for the agent's extractor, and a phrasing met by any
    part is embedded once. Else a new memory of ``capacity`` texts over ``embedder``."""
    if embedder.name == MODEL_NAME:
        return _shared(capacity)
    return RecentEmbedder(embedder, capacity=capacity)


def word_memory(embedder: Embedder, capacity: int) -> Embedder:
    """Where a classifier of single words (the context graph's people classifier: "aunt",
    "crew") gets their vectors, beside ``embedder``.

    When ``embedder`` is MiniLM: float32 MiniLM on onnxruntime (its vectors within 2.5e-7
    of torch's, so a decision moves only for a word within that of a threshold) behind a
    memory of ``capacity`` words, new for each caller: one word costs ~3 ms there against
    torch float32's 12-16 (docs/context.md, session 14). Else ``embedder`` itself."""
    if embedder.name == MODEL_NAME:
        return RecentEmbedder(OnnxMiniLM(), capacity=capacity)
    return embedder


def _twin() -> PhraseTwin | OnnxMiniLM:
    if bfloat16.available():
        return PhraseTwin()
    return OnnxMiniLM()


_memory: RecentEmbedder | None = None
_memory_lock = threading.Lock()


def _shared(capacity: int) -> RecentEmbedder:
    global _memory
    with _memory_lock:
        if _memory is None:
            twin = _twin()
            twin.warm()  # the graph is derived (first use only) and loaded here, off a turn
            _memory = RecentEmbedder(twin, capacity=capacity)
        return _memory
