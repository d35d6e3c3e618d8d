"""Persistence: the event log, simulation runs and snapshots, in SQLite or PostgreSQL.

The memory itself lives in process; what people review later is written here through
``EventSink`` (batched, off the engine's thread) and the repositories of ``open_database``.
``MemoryStore`` offers the same repositories without a database.
"""

from memory_core.store.context_graphs import (
    ContextEdgeRecord,
    ContextGraphRepository,
    ContextNodeRecord,
    StoredGraph,
)
from memory_core.store.engine import Database, open_database, resolve_url
from memory_core.store.erase import Subject, register_erasable
from memory_core.store.memory import MemoryStore
from memory_core.store.pii import PiiScrubber
from memory_core.store.privacy import EventEncoder, LogContent
from memory_core.store.recording import open_recorded, record_snapshot, restore_evicted
from memory_core.store.records import (
    AtlasInfo,
    EventFilter,
    EventRecord,
    Page,
    RunRecord,
    SnapshotInfo,
    StoredEvent,
    WeightPoint,
)
from memory_core.store.repositories import (
    AtlasRepository,
    EventRepository,
    RunRepository,
    SnapshotRepository,
    Store,
)
from memory_core.store.sink import EventSink

__all__ = [
    "AtlasInfo",
    "AtlasRepository",
    "ContextEdgeRecord",
    "ContextGraphRepository",
    "ContextNodeRecord",
    "Database",
    "EventEncoder",
    "EventFilter",
    "EventRecord",
    "EventRepository",
    "EventSink",
    "LogContent",
    "MemoryStore",
    "Page",
    "PiiScrubber",
    "RunRecord",
    "RunRepository",
    "SnapshotInfo",
    "SnapshotRepository",
    "Store",
    "StoredEvent",
    "StoredGraph",
    "Subject",
    "WeightPoint",
    "open_database",
    "open_recorded",
    "record_snapshot",
    "register_erasable",
    "resolve_url",
    "restore_evicted",
]
