"""Whole-atlas snapshots: one uncompressed zip of columnar ``.npy`` members.

Exact round trip: a loaded atlas has the same memories, weights, edges, vectors,
sessions, counters and id generator state as the saved one. ``layout`` describes the
file, ``capture`` takes a snapshot, ``load`` reads and checks one (``legacy`` reads the
older layout), ``restore`` fills an atlas from it, ``sections`` carries named extra
data that other parts keep beside the atlas (the engine reads them back as bytes, never
inside). Restore hands the loaded vectors and texts to the atlas's own
``AtlasState.index``, with what the file holds of the indexes themselves (``hnsw``: the
vector index's graph; ``lexical``: the BM25 postings), so neither is rebuilt.
"""

from memory_core.engine.snapshot.capture import Capture, Frozen, capture, complete, freeze, write
from memory_core.engine.snapshot.layout import FORMAT
from memory_core.engine.snapshot.legacy import FORMAT as LEGACY_FORMAT
from memory_core.engine.snapshot.load import SnapshotData, read
from memory_core.engine.snapshot.restore import restore
from memory_core.engine.snapshot.sections import add_sections, read_sections

READABLE_VERSIONS = frozenset(int(f.rsplit("/", 1)[1]) for f in (FORMAT, LEGACY_FORMAT))
"""Format versions ``read`` accepts (a recorded snapshot row stores its version)."""

__all__ = [
    "FORMAT",
    "READABLE_VERSIONS",
    "Capture",
    "Frozen",
    "SnapshotData",
    "add_sections",
    "capture",
    "complete",
    "freeze",
    "read",
    "read_sections",
    "restore",
    "write",
]
