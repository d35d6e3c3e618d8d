"""Recorded atlases: snapshot files into the store and back, and restoring evicted memories.

An agent in another process calls ``record_snapshot`` on its own atlas; the dashboard
lists the snapshots and opens one with ``open_recorded`` as a read-only "recorded atlas".
The agent's reads are in the event log too (``MemoryRead``, published by the MCP server),
so ``atlas import recording`` can turn a recording into a conversation to replay.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_core.embedding.base import Embedder
from memory_core.engine.apply import save_checkpoint
from memory_core.engine.clock import Clock
from memory_core.engine.model import MemoryNode
from memory_core.engine.snapshot import FORMAT, READABLE_VERSIONS, add_sections
from memory_core.engine.snapshot import read as read_snapshot
from memory_core.errors import InputError
from memory_core.store.records import EVICTED, SnapshotInfo, StoredEvent
from memory_core.store.repositories import SnapshotRepository

if TYPE_CHECKING:  # the atlas pulls in FAISS; only needed when a snapshot is opened
    from memory_core.engine.atlas import ElasticMemoryAtlas

SNAPSHOT_FORMAT_VERSION = int(FORMAT.rsplit("/", 1)[1])
LIVE_LABEL = "live"
"""Label of the snapshots a ``LiveRecorder`` takes while its agent runs."""
FINAL_LABEL = "final"
"""Label of the snapshot taken when the recording stops."""


def record_snapshot(
    atlas: ElasticMemoryAtlas,
    repo: SnapshotRepository,
    *,
    atlas_id: str,
    label: str,
    position: Callable[[], int] | None = None,
    sections: Callable[[], Mapping[str, bytes]] | None = None,
) -> SnapshotInfo:
    """Save ``atlas`` to a temp file and store its bytes with counts and sessions.

    With ``position`` (a recorder's event count, read at the instant of the copy) the
    snapshot is a checkpoint: followers apply the events after ``event_seq``. With
    ``sections`` what other parts keep beside the atlas (``store.context_io``) goes into
    the same file.
    """
    with tempfile.TemporaryDirectory(prefix="atlas-snapshot-") as tmp:
        saved = save_checkpoint(atlas, Path(tmp) / "atlas.npz", position)
        if sections is not None:
            add_sections(saved.path, sections())
        data = saved.path.read_bytes()
    return repo.save(
        event_seq=saved.position,
        atlas_id=atlas_id,
        label=label,
        data=data,
        format_version=SNAPSHOT_FORMAT_VERSION,
        node_count=saved.nodes,
        edge_count=saved.edges,
        sessions=saved.sessions,
    )


def prune_snapshots(repo: SnapshotRepository, atlas_id: str, *, keep: int) -> int:
    """Delete all but the newest ``keep`` live snapshots of ``atlas_id``; returns how many.

    Snapshots saved under any other label (by hand, ``final``) are never pruned.
    """
    old = [
        s.id for s in repo.list(atlas_id=atlas_id, limit=keep + 100).items if s.label == LIVE_LABEL
    ][keep:]
    for snapshot_id in old:
        repo.delete(snapshot_id)
    return len(old)


def open_recorded(
    repo: SnapshotRepository,
    snapshot_id: str,
    *,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
) -> ElasticMemoryAtlas:
    """Rebuild the atlas stored as ``snapshot_id`` (exact round trip)."""
    from memory_core.engine.atlas import ElasticMemoryAtlas

    info = repo.get(snapshot_id)
    if info.format_version not in READABLE_VERSIONS:
        raise InputError(
            "snapshot",
            f"{snapshot_id} has format version {info.format_version}; "
            f"this version reads {', '.join(map(str, sorted(READABLE_VERSIONS)))}",
        )
    with tempfile.TemporaryDirectory(prefix="atlas-snapshot-") as tmp:
        path = Path(tmp) / "atlas.npz"
        path.write_bytes(repo.data(snapshot_id))
        return ElasticMemoryAtlas.load_snapshot(path, embedder=embedder, clock=clock)


def recorded_metadata(repo: SnapshotRepository, atlas_id: str) -> dict[str, dict[str, Any]]:
    """Metadata of each memory in the newest snapshot of ``atlas_id`` (none without one).

    Write events logged by a plain sink (not a ``LiveRecorder``) carry a memory's text but
    not its metadata (the speaker): the importer reads it here, without building an atlas
    (no embedder, no index).
    """
    newest = repo.list(atlas_id=atlas_id, limit=1).items
    if not newest:
        return {}
    with tempfile.TemporaryDirectory(prefix="atlas-snapshot-") as tmp:
        path = Path(tmp) / "atlas.npz"
        path.write_bytes(repo.data(newest[0].id))
        data = read_snapshot(path)
    return {node_id: meta for node_id, meta in zip(data.ids, data.metadata, strict=True) if meta}


def restore_evicted(atlas: ElasticMemoryAtlas, event: StoredEvent) -> MemoryNode:
    """Add an evicted memory back from the log (only possible with ``log_content=full``)."""
    if event.type != EVICTED:
        raise InputError("event", f"event {event.id} is of type {event.type!r}, not an eviction")
    if event.content is None:
        raise InputError(
            "event",
            f"eviction {event.id} has no logged content (log_content was redacted or none), "
            "so the memory cannot be restored",
        )
    payload = event.payload
    return atlas.add(
        event.content,
        session_id=event.session_id or "default",
        kind=str(payload.get("kind", "session")),
        metadata=payload.get("metadata") or None,
        provenance=payload.get("provenance") or None,
    )
