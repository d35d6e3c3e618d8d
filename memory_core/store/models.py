"""Imports every core table so that ``Base.metadata`` is complete."""

from __future__ import annotations

from memory_core.store.atlases import AtlasRow
from memory_core.store.context_tables import ContextEdgeRow, ContextNodeRow
from memory_core.store.events import EventRow, WeightSampleRow
from memory_core.store.runs import RunRow
from memory_core.store.snapshots import SnapshotPartRow, SnapshotRow, SnapshotSessionRow

__all__ = [
    "AtlasRow",
    "ContextEdgeRow",
    "ContextNodeRow",
    "EventRow",
    "RunRow",
    "SnapshotPartRow",
    "SnapshotRow",
    "SnapshotSessionRow",
    "WeightSampleRow",
]
