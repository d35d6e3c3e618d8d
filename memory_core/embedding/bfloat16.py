"""MiniLM with its weights in bfloat16: the same model at about 60-75 % of the CPU, for the
short texts a classifier compares with its own examples.

On this machine (Zen 4, 2 cores shared) a MiniLM call of a few short phrases costs what
reading the model's 90 MB of float32 weights costs (~8 ms CPU) more than its tokens; in
bfloat16 the weights are half that and the CPU's bf16 dot products do the arithmetic, so a
live turn's phrase call falls from 10-40 to 8-24 ms CPU. Each vector is within a cosine of
0.9999 of the float32 one, not equal: what it embeds is compared only with a classifier's
examples and phrases (``phrase_twin``, which runs its calls of many tokens here and its
small ones on onnxruntime), never with vectors stored by the float32 model. Used only where
the processor computes bf16 natively (``available``); elsewhere bf16 arithmetic is
emulated and slower than float32.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import numpy as np

from memory_core.embedding.minilm import MODEL_NAME, MiniLMEmbedder, _load_model, padded_batch

NAME = f"{MODEL_NAME}/bfloat16"


@functools.cache
def available() -> bool:
    """Whether this processor does bf16 arithmetic natively (oneDNN says so)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


@functools.cache
def _bf16_transformer(device: str) -> Any:
    """A bfloat16 copy of the loaded MiniLM's transformer (the float32 model stays as is)."""
    import torch

    model = _load_model(device)
    return copy.deepcopy(model[0].auto_model).to(torch.bfloat16).eval()


class BFloat16MiniLM(MiniLMEmbedder):
    """MiniLM (mean pooling, unit length, batched and threaded as ``MiniLMEmbedder``) run
    in bfloat16; thread-safe."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return NAME

    def _encode(self, model: Any, batch: list[str]) -> np.ndarray:
        import torch

        tokens = padded_batch(model, batch, "pt")
        with torch.inference_mode():
            hidden = _bf16_transformer(self._device)(**tokens).last_hidden_state.float()
            mask = tokens["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
            vectors: np.ndarray = torch.nn.functional.normalize(pooled, dim=1).numpy()
        return vectors
