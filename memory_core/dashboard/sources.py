"""Atlases the dashboard can show besides the live one: recorded snapshots and uploaded
files, each with the task context graphs saved in it."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from memory_core.boundary import FileLimits, checked_bytes
from memory_core.context.graph import ContextGraph
from memory_core.embedding.base import Embedder
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.errors import AtlasError, InputError, UploadError
from memory_core.store.context_io import SECTION, graphs_in_snapshot

if TYPE_CHECKING:
    from memory_core.store.records import SnapshotInfo
    from memory_core.store.repositories import Store

SNAPSHOT_LIMITS = FileLimits(max_bytes=512 * 1024 * 1024)
"""A snapshot is binary (``.npz``): only its size is the shared reader's to check."""


def load_snapshot_bytes(
    data: bytes, embedder: Embedder, *, name: str = "the file"
) -> ElasticMemoryAtlas:
    """Rebuild an atlas from the bytes of a snapshot file (upload or database).

    Errors name ``name``, never the temporary file on the server, and a file no library
    could read says so plainly instead of passing on the library's advice (NumPy's
    ``allow_pickle``, zip internals).

    Raises:
        UploadError: empty, too large, or not a snapshot ``load_snapshot`` accepts.
    """
    checked_bytes(name, data, SNAPSHOT_LIMITS)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.npz"
        path.write_bytes(data)
        try:
            return ElasticMemoryAtlas.load_snapshot(path, embedder=embedder)
        except AtlasError as exc:
            cause = exc.__cause__
            if cause is not None and not isinstance(cause, AtlasError):
                raise UploadError(
                    name,
                    "file",
                    "is not an Elastic Atlas snapshot (a .npz file written by save_snapshot "
                    "or the recorder)",
                ) from exc
            problem = exc.problem if isinstance(exc, InputError) else str(exc)
            problem = problem.replace(f"{path}: ", "").replace(str(path), name)
            raise UploadError(name, "file", problem) from exc
        except Exception as exc:  # anything a library raised past the loader
            raise UploadError(name, "file", "could not be read as a snapshot") from exc


def snapshot_graphs(data: bytes, *, name: str = "the file") -> dict[str, ContextGraph]:
    """The task context graphs a snapshot's bytes carry, by session (none: empty)."""
    try:
        return graphs_in_snapshot(io.BytesIO(data))
    except InputError as exc:
        raise UploadError(name, SECTION, exc.problem) from exc


def open_snapshot(
    data: bytes, embedder: Embedder, *, name: str = "the file"
) -> tuple[ElasticMemoryAtlas, dict[str, ContextGraph]]:
    """An atlas and the context graphs saved beside it, from one snapshot's bytes."""
    return load_snapshot_bytes(data, embedder, name=name), snapshot_graphs(data, name=name)


def recorded_snapshots(store: Store, limit: int = 200) -> list[SnapshotInfo]:
    """Snapshots stored in the database, newest first."""
    return list(store.snapshots.list(limit=limit).items)


def snapshot_label(info: SnapshotInfo) -> str:
    return (
        f"{info.label} · {info.created_at:%Y-%m-%d %H:%M} · "
        f"{info.node_count} memories · {info.atlas_id[:8]}"
    )


def load_recorded(
    store: Store, snapshot_id: str, embedder: Embedder
) -> tuple[ElasticMemoryAtlas, dict[str, ContextGraph]]:
    return open_snapshot(
        store.snapshots.data(snapshot_id), embedder, name=f"snapshot {snapshot_id}"
    )
