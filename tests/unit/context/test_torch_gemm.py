"""``TorchGemmOps``: thinc's matrix product through ``torch.mm`` gives BLIS's product (to
float rounding) for every transpose and output form thinc's layers ask for, and refuses
what ``NumpyOps`` refuses."""

from __future__ import annotations

import numpy as np
import pytest
from thinc.api import NumpyOps

from memory_core.context.extract.torch_gemm import TorchGemmOps

BLIS = NumpyOps()


def _pair(trans1: bool, trans2: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((288, 37) if trans1 else (37, 288)).astype(np.float32)
    y = rng.standard_normal((96, 288) if trans2 else (288, 96)).astype(np.float32)
    return x, y


@pytest.mark.parametrize("trans1", [False, True])
@pytest.mark.parametrize("trans2", [False, True])
def test_product_matches_blis(trans1: bool, trans2: bool) -> None:
    x, y = _pair(trans1, trans2)
    got = TorchGemmOps().gemm(x, y, trans1=trans1, trans2=trans2)
    expected = BLIS.gemm(x, y, trans1=trans1, trans2=trans2)
    assert got.shape == (37, 96)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def test_writes_into_out_and_returns_it() -> None:
    x, y = _pair(False, True)
    out = np.full((37, 96), np.nan, dtype=np.float32)
    got = TorchGemmOps().gemm(x, y, out=out, trans2=True)
    assert got is out
    np.testing.assert_allclose(out, BLIS.gemm(x, y, trans2=True), rtol=1e-5, atol=1e-4)


def test_non_contiguous_input_is_read_as_is() -> None:
    x, y = _pair(False, False)
    wide = np.repeat(x, 2, axis=1)[:, ::2]  # a strided view equal to x
    np.testing.assert_allclose(TorchGemmOps().gemm(wide, y), BLIS.gemm(x, y), rtol=1e-5, atol=1e-4)


def test_float64_is_refused_as_numpy_ops_refuses_it() -> None:
    x, y = (a.astype(np.float64) for a in _pair(False, False))
    with pytest.raises(ValueError, match="float32"):
        BLIS.gemm(x, y)
    with pytest.raises(ValueError, match="float32"):
        TorchGemmOps().gemm(x, y)
