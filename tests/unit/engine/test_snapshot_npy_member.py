"""npy_member.read: a snapshot member read into plain pages, exactly as np.load reads it."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from memory_core.engine.snapshot import npy_member


def test_members_read_as_np_load_reads_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    arrays = {
        "big": rng.normal(size=(3000, 384)).astype(np.float32),  # 4.6 MB: plain pages, 5 chunks
        "empty": np.zeros((0, 384), dtype=np.float32),
        "scalar": np.array(3.5),
        "flags": rng.random(33) < 0.5,
        "fortran": np.asfortranarray(rng.integers(-9, 9, size=(5, 7)).astype(np.int32)),
        "wide": np.asfortranarray(rng.normal(size=(2000, 384))),  # plain pages, Fortran order
        "text": np.frombuffer(b"utf-8 bytes", dtype=np.uint8),
    }
    path = tmp_path / "a.npz"
    np.savez(path, **arrays)
    with np.load(path) as npz:
        for name in npz.files:
            got, want = npy_member.read(npz, name), npz[name]
            assert got.dtype == want.dtype and got.shape == want.shape, name
            assert got.flags.f_contiguous == want.flags.f_contiguous, name
            np.testing.assert_array_equal(got, want)


def test_a_short_or_flipped_member_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    np.savez(path, v=np.arange(1000, dtype=np.int64))
    with zipfile.ZipFile(path) as archive:
        data = archive.read("v.npy")
    short, flipped = tmp_path / "short.npz", tmp_path / "flipped.npz"
    with zipfile.ZipFile(short, "w") as archive:
        archive.writestr("v.npy", data[:-8])
    with zipfile.ZipFile(flipped, "w") as archive:
        archive.writestr("v.npy", data)
    raw = bytearray(flipped.read_bytes())
    raw[raw.index(data[-8:])] ^= 0xFF  # a data byte of the stored (uncompressed) member
    flipped.write_bytes(bytes(raw))
    with np.load(short) as npz, pytest.raises(ValueError, match="fewer than the 8000 bytes"):
        npy_member.read(npz, "v")
    with np.load(flipped) as npz, pytest.raises(zipfile.BadZipFile):
        npy_member.read(npz, "v")


def test_object_arrays_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    np.savez(path, o=np.array([{"a": 1}, None], dtype=object))
    with np.load(path, allow_pickle=True) as npz, pytest.raises(ValueError, match="Object"):
        npy_member.read(npz, "o")
