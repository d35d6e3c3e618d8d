"""Uploads fail with messages about the user's file: no server paths, no library advice."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from memory_core.dashboard.sources import load_snapshot_bytes
from memory_core.errors import InputError
from memory_core.testing import HashingEmbedder


def _pickled_npz() -> bytes:
    out = io.BytesIO()
    np.savez(out, meta=np.array([object()], dtype=object))
    return out.getvalue()


def _zip_without_meta() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("x.npy", b"garbage")
    return out.getvalue()


@pytest.mark.parametrize(
    "data", [b"garbage", b"PK\x03\x04junk", _zip_without_meta(), _pickled_npz()]
)
def test_garbage_snapshot_names_the_upload_only(data: bytes) -> None:
    with pytest.raises(InputError) as caught:
        load_snapshot_bytes(data, HashingEmbedder(), name="mine.npz")
    message = str(caught.value)
    assert "mine.npz" in message
    for leak in ("/tmp", "allow_pickle", "pickle", "zip", "archive", "snapshot.npz"):
        assert leak not in message


def test_empty_snapshot_says_so() -> None:
    with pytest.raises(InputError, match=r"mine\.npz: file: is empty"):
        load_snapshot_bytes(b"", HashingEmbedder(), name="mine.npz")


def test_valid_snapshot_still_loads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memory_core.engine.atlas import ElasticMemoryAtlas

    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder())
    atlas.add("a memory worth keeping", session_id="s")
    atlas.save_snapshot(tmp_path / "a.npz")
    loaded = load_snapshot_bytes((tmp_path / "a.npz").read_bytes(), HashingEmbedder(), name="a")
    assert [n.content for n in loaded.nodes()] == ["a memory worth keeping"]
