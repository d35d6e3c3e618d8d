"""Recording a running atlas for the dashboard: every event through the batched sink and
a snapshot every few seconds, so another process (the dashboard) can watch it live."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from memory_core.errors import AtlasError, InputError
from memory_core.store.engine import Database, open_database
from memory_core.store.recording import record_snapshot
from memory_core.store.sink import EventSink

if TYPE_CHECKING:
    from memory_core.atlas import ElasticMemoryAtlas

log = logging.getLogger(__name__)


class LiveRecorder:
    """Sink + periodic snapshots of one atlas; ``close`` flushes and takes a last snapshot."""

    def __init__(
        self, atlas: ElasticMemoryAtlas, db: Database, *, name: str, snapshot_every: float
    ) -> None:
        if not snapshot_every > 0:
            raise InputError("snapshot_every", f"must be > 0 seconds, got {snapshot_every!r}")
        self.atlas = atlas
        self.db = db
        self.sink = EventSink(db, atlas_name=name).attach(atlas)
        self._every = snapshot_every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="atlas-live-snapshots", daemon=True)
        self._thread.start()

    @classmethod
    def start(
        cls,
        atlas: ElasticMemoryAtlas,
        *,
        url: str | None = None,
        name: str = "agent",
        snapshot_every: float = 5.0,
    ) -> LiveRecorder:
        return cls(atlas, open_database(url), name=name, snapshot_every=snapshot_every)

    @property
    def atlas_id(self) -> str:
        return self.sink.atlas_id

    def snapshot(self, label: str = "live") -> None:
        """Record one snapshot now; a database failure is logged, never raised into the agent."""
        try:
            record_snapshot(self.atlas, self.db.snapshots, atlas_id=self.atlas_id, label=label)
        except AtlasError as exc:
            log.warning("snapshot not recorded: %s", exc)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self.snapshot("final")
        self.sink.close()
        self.db.close()

    def _run(self) -> None:
        last_version = -1
        while not self._stop.wait(self._every):
            version = self._version()
            if version != last_version:
                self.snapshot()
                last_version = version

    def _version(self) -> int:
        stats = self.atlas.stats()
        return hash(
            (
                stats["added"],
                stats["merged"],
                stats["retrievals"],
                stats["evicted_total"],
                stats["decay_passes"],
            )
        )
