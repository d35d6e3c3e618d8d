"""spaCy's dense layers multiplied by PyTorch instead of BLIS: the same parse at about
three quarters of the CPU.

thinc's ``NumpyOps.gemm`` calls the ``blis`` package, whose kernels on this machine (Zen 4)
multiply the pipeline's matrices (a turn's 30-1,400 token rows by 288x288, 384x288 and
64x1,024 weights) 2.5-3x slower than PyTorch's CPU ``mm``; those products are about 30 %
of a parse. PyTorch is loaded anyway (MiniLM, and ``import spacy`` imports it). Only the
dense products move: the parser's transition loop keeps BLIS's C routines
(``ops.cblas()``), and every other op is ``NumpyOps``'. The products differ from BLIS's in
the last bits (summation order, at most 6e-5 on the pipeline's sizes), never with the
thread count; every LoCoMo dev and task dev turn parses to the same tags, lemmas, arcs and
entities either way (docs/context.md, fifth speed pass).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from thinc.api import NumpyOps

if TYPE_CHECKING:
    from spacy.language import Language


class TorchGemmOps(NumpyOps):  # type: ignore[misc]  # thinc's Cython class is untyped
    """``NumpyOps`` with its float32 matrix product done by ``torch.mm`` (CPU)."""

    def gemm(
        self,
        x: np.ndarray,
        y: np.ndarray,
        *,
        out: np.ndarray | None = None,
        trans1: bool = False,
        trans2: bool = False,
    ) -> np.ndarray:
        if x.dtype != np.float32 or y.dtype != np.float32 or x.ndim != 2 or y.ndim != 2:
            return super().gemm(x, y, out=out, trans1=trans1, trans2=trans2)  # type: ignore[no-any-return]
        left = torch.from_numpy(np.ascontiguousarray(x))
        right = torch.from_numpy(np.ascontiguousarray(y))
        if trans1:
            left = left.T
        if trans2:
            right = right.T
        product: np.ndarray = torch.mm(left, right).numpy()
        if out is None:
            return product
        out[...] = product
        return out


def use_torch_gemm(nlp: Language) -> None:
    """Every layer of ``nlp``'s trained components multiplies through ``TorchGemmOps``."""
    ops = TorchGemmOps()
    for _, component in nlp.pipeline:
        model: Any = getattr(component, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for layer in model.walk():
            layer.ops = ops
