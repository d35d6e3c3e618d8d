"""A cross-encoder over all-MiniLM-L6-v2: both texts in one pass, attention across them.

The pair model (``pair_model.py``) reads two sentence vectors made apart, so "is married"
and "I'm single" meet only as two points in a space where they lie close. Here MiniLM
reads ``[CLS] a [SEP] b [SEP]``: every token of one text attends to every token of the
other. Its weights are MiniLM's own plus low-rank deltas (LoRA: ``W + (alpha / r) B A``) on the
attention and feed-forward projections of the top layers, and a linear head over the mean
of the tokens' last states, trained by ``benchmarks/train_pair_encoder.py`` on the
project's own pair sets (never the independent sets of issue #27). Only the deltas and the
head are stored (``pair_encoder.npz``, under 1 MB); loading adds them to a private copy of
the packaged model. A pair costs a MiniLM run in each order (a contradiction has no
direction: their logits are averaged), so the judge asks it only about the pairs its pair
model leaves open (``claim_judge.SURE``), and off the write path (``second_look.py``).

Pairs are read in batches of similar token counts (a batch is padded to its longest pair:
grouped, the scenario pairs cost 15.6 ms of CPU a pair instead of 21.0, probabilities
equal up to float rounding), and where the processor computes bfloat16 natively the
merged model runs in bfloat16, as the context graph's classifiers do
(``embedding/bfloat16.py``): 8.6 ms a pair, probabilities within 0.03 of float32's
(docs/conflicts.md, sixth pass).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_core.conflicts.pair_model import packaged_arrays

MODEL_FILE = "pair_encoder.npz"
EMBEDDER = "all-MiniLM-L6-v2"
"""The sentence embedder whose weights the deltas are added to (``MiniLMEmbedder.name``)."""
TARGETS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
"""The linear layers of each BERT layer that get a low-rank delta."""
MAX_TOKENS = 128
"""A pair is cut to this many tokens, the longer text first."""


def _torch() -> Any:
    import torch

    return torch


def base_model() -> tuple[Any, Any]:
    """A private copy of the packaged MiniLM (transformers ``BertModel``) and its tokenizer,
    loaded offline."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers import AutoModel, AutoTokenizer

    from memory_core.embedding.minilm import model_path

    path = str(model_path())
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True)
    return model, tokenizer


def target_layers(model: Any, first: int = 0) -> dict[str, Any]:
    """The linear layers that carry deltas (those of layer ``first`` and above), by their
    name inside the model."""
    return {
        name: module
        for name, module in model.named_modules()
        if any(name.endswith(t) for t in TARGETS)
        and name.startswith("encoder.layer.")
        and int(name.split(".")[2]) >= first
    }


def additive_mask(attention_mask: Any) -> Any:
    """The (batch, 1, 1, tokens) mask a BERT layer adds to its attention scores."""
    torch = _torch()
    keep = attention_mask[:, None, None, :].to(torch.float32)
    return (1.0 - keep) * torch.finfo(torch.float32).min


def run_layers(model: Any, states: Any, attention_mask: Any, first: int, last: int) -> Any:
    """Hidden states after BERT layers ``first`` to ``last - 1``, from those before them."""
    mask = additive_mask(attention_mask)
    for layer in model.encoder.layer[first:last]:
        out = layer(states, attention_mask=mask)
        states = out[0] if isinstance(out, tuple) else out
    return states


def mean_pool(states: Any, attention_mask: Any) -> Any:
    """The mean of the pair's tokens' states (padding left out): the head's input."""
    mask = attention_mask.unsqueeze(-1).to(states.dtype)
    return (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


def encode_pairs(tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Token ids of ``[CLS] a [SEP] b [SEP]`` for each pair, padded to the longest."""
    return dict(
        tokenizer(
            [a for a, _ in pairs],
            [b for _, b in pairs],
            padding=True,
            truncation="longest_first",
            max_length=MAX_TOKENS,
            return_tensors="pt",
        )
    )


def merge(model: Any, deltas: dict[str, tuple[np.ndarray, np.ndarray]], scale: float) -> None:
    """Add each layer's low-rank delta ``scale * B @ A`` to its weight, in place."""
    torch = _torch()
    layers = target_layers(model)
    with torch.no_grad():
        for name, (a, b) in deltas.items():
            layers[name].weight += scale * torch.from_numpy(b) @ torch.from_numpy(a)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function, clipped so that no logit overflows."""
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0))))


def lora_scale(alpha: float, rank: int) -> float:
    """What a low-rank delta ``B A`` is multiplied by (LoRA's ``alpha / r``)."""
    return alpha / rank


class PairEncoder:
    """The trained cross-encoder: MiniLM with its deltas added, and the head; thread-safe.

    Args:
        arrays: the model file's arrays (``delta/<layer>/a``, ``delta/<layer>/b``,
            ``head_weight``, ``head_bias``, ``scale``).
    """

    __slots__ = ("_head_bias", "_head_weight", "_lock", "_model", "_tokenizer")

    def __init__(self, arrays: dict[str, np.ndarray], *, bfloat16: bool = False) -> None:
        self._model, self._tokenizer = base_model()
        deltas = {
            key[len("delta/") : -len("/a")]: (arrays[key], arrays[key[:-2] + "/b"])
            for key in arrays
            if key.startswith("delta/") and key.endswith("/a")
        }
        merge(self._model, deltas, float(arrays["scale"]))
        if bfloat16:  # after the merge: the deltas are added in float32
            self._model = self._model.to(_torch().bfloat16)
        self._model.eval()
        self._head_weight = arrays["head_weight"].astype(np.float32)
        self._head_bias = float(arrays["head_bias"])
        self._lock = threading.Lock()

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The probability that each ``(a, b)`` contradicts, from both orders, in batches of
        :data:`BATCH` pairs of similar token counts, on one torch thread."""
        torch = _torch()
        from memory_core.embedding.minilm import _torch_threads

        out = np.empty(len(pairs), dtype=np.float64)
        with self._lock, _torch_threads(1), torch.inference_mode():
            for rows in _by_length(self._tokenizer, pairs, BATCH):
                said = [pairs[i] for i in rows]
                batch = encode_pairs(self._tokenizer, said + [(b, a) for a, b in said])
                states = self._model(**batch).last_hidden_state.float()
                pooled = mean_pool(states, batch["attention_mask"]).numpy()
                z = pooled @ self._head_weight + self._head_bias
                out[rows] = both_orders(z)
        return out


def _by_length(tokenizer: Any, pairs: Sequence[tuple[str, str]], size: int) -> list[list[int]]:
    """Indices of ``pairs`` in batches of ``size``, fewest tokens first (less padding)."""
    if len(pairs) <= size:
        return [list(range(len(pairs)))] if pairs else []
    ids = tokenizer(
        [a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
        max_length=MAX_TOKENS,
    )["input_ids"]  # fmt: skip
    order = sorted(range(len(pairs)), key=lambda i: len(ids[i]))
    return [order[start : start + size] for start in range(0, len(order), size)]


def both_orders(logits: np.ndarray) -> np.ndarray:
    """Each pair's probability from the logits of its two orders (the first half of
    ``logits`` read ``(a, b)``, the second ``(b, a)``): the sigmoid of their mean."""
    half = len(logits) // 2
    return sigmoid((logits[:half] + logits[half:]) / 2.0)


BATCH = 32
"""Pairs per model call (each read in both orders)."""


@functools.cache
def load() -> PairEncoder:
    """The committed cross-encoder (``memory_core/conflicts/pair_encoder.npz``), read once.

    Raises:
        ConfigError: the file is missing or unreadable.
    """
    from memory_core.embedding import bfloat16

    return PairEncoder(packaged_arrays("pair encoder", MODEL_FILE), bfloat16=bfloat16.available())
