"""Recording a running atlas for the dashboard: every event through the batched sink,
enriched so it can be replayed exactly (``memory_core.engine.apply``), and now and then a
checkpoint snapshot, so another process (the dashboard) can follow it.

A follower loads a checkpoint once and then applies the events after it
(``memory_core.store.follow``); checkpoints are only its starting points and its way
back after a gap, so they are rare: one at start, then when ``snapshot_events`` events
have accumulated or ``snapshot_every`` seconds have passed, whichever comes first, and
never when nothing changed; a slow snapshot spaces out the next ones
(``MAX_BUSY_SHARE``). Only the newest ``keep_snapshots`` live snapshots are kept. A
heartbeat every few seconds tells the dashboard the recorder is still running even while
the agent is idle; ``close`` takes a last snapshot labelled ``final`` so the dashboard
can say the recording stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from memory_core.engine import validate as check
from memory_core.engine.apply import recording
from memory_core.engine.events import AtlasEvent
from memory_core.errors import AtlasError
from memory_core.store.engine import Database, open_database
from memory_core.store.recording import (
    FINAL_LABEL,
    LIVE_LABEL,
    prune_snapshots,
    record_snapshot,
)
from memory_core.store.sink import EventSink

if TYPE_CHECKING:
    from collections.abc import Callable

    from memory_core.engine.atlas import ElasticMemoryAtlas

log = logging.getLogger(__name__)

DEFAULT_SNAPSHOT_EVERY = 60.0
"""Seconds between checkpoints while anything changes (followers apply events between)."""
DEFAULT_SNAPSHOT_EVENTS = 20_000
"""A burst of this many events checkpoints early, without waiting for the interval."""
DEFAULT_KEEP_SNAPSHOTS = 5
MIN_SNAPSHOT_GAP = 0.5
"""Seconds between two snapshots at the least, however fast events arrive."""
MAX_BUSY_SHARE = 0.1
"""At most this share of wall time goes into snapshots: a snapshot that took 0.4 s
(a big atlas, a busy machine) waits 4 s before the next, so the agent keeps its speed."""
HEARTBEAT_EVERY = 5.0
FLUSH_EVERY = 0.25
"""Seconds between the sink's writes: with the dashboard's 1 s poll, a follower is at
most about 1.25 s behind plus the time to apply what came."""


class LiveRecorder:
    """Sink + snapshots of one atlas; ``close`` flushes and takes a final snapshot."""

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        db: Database,
        *,
        name: str,
        snapshot_every: float = DEFAULT_SNAPSHOT_EVERY,
        snapshot_events: int = DEFAULT_SNAPSHOT_EVENTS,
        keep_snapshots: int = DEFAULT_KEEP_SNAPSHOTS,
    ) -> None:
        _check(snapshot_every, snapshot_events, keep_snapshots)
        self.atlas = atlas
        self.db = db
        self.sink = EventSink(db, atlas_name=name, flush_interval=FLUSH_EVERY)
        self._unrecord = atlas.subscribe(recording(atlas, self.sink))
        self._every = float(snapshot_every)
        self._burst = snapshot_events
        self._keep = keep_snapshots
        self._cond = threading.Condition()
        self._events = 0
        self._wake_at = snapshot_events
        self._stop = False
        self._closed = False
        self.snapshots_taken = 0
        self._unsubscribe: Callable[[], None] = atlas.subscribe(self._on_event)
        self._name = name
        self._registered = self._register()  # listed at once, before the agent's first write
        self.snapshot()  # the followers' first checkpoint, before the agent's first write
        self._checkpointed = (0, self._version())
        self._thread = threading.Thread(target=self._run, name="atlas-live-snapshots", daemon=True)
        self._thread.start()

    @classmethod
    def start(
        cls,
        atlas: ElasticMemoryAtlas,
        *,
        url: str | None = None,
        name: str = "agent",
        snapshot_every: float = DEFAULT_SNAPSHOT_EVERY,
        snapshot_events: int = DEFAULT_SNAPSHOT_EVENTS,
        keep_snapshots: int = DEFAULT_KEEP_SNAPSHOTS,
    ) -> LiveRecorder:
        _check(snapshot_every, snapshot_events, keep_snapshots)
        return cls(
            atlas,
            open_database(url),
            name=name,
            snapshot_every=snapshot_every,
            snapshot_events=snapshot_events,
            keep_snapshots=keep_snapshots,
        )

    @property
    def atlas_id(self) -> str:
        return self.sink.atlas_id

    def snapshot(self, label: str = LIVE_LABEL) -> None:
        """Record one snapshot now; a database failure is logged, never raised into the agent."""
        try:
            record_snapshot(
                self.atlas,
                self.db.snapshots,
                atlas_id=self.atlas_id,
                label=label,
                position=lambda: self.sink.sequence,
            )
            self.snapshots_taken += 1
            prune_snapshots(self.db.snapshots, self.atlas_id, keep=self._keep)
        except AtlasError as exc:
            log.warning("snapshot not recorded: %s", exc)

    def close(self) -> None:
        """Stop, write the buffered events and a ``final`` snapshot; idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = self._stop = True
            self._cond.notify_all()
        self._unsubscribe()
        self._thread.join(timeout=30)
        if not self._registered:  # a recorder that never got listed is listed by its goodbye
            self._registered = self._register()
        self.snapshot(FINAL_LABEL)
        self._unrecord()
        self.sink.close()
        self.db.close()

    def _on_event(self, event: AtlasEvent) -> None:
        """Count the event (the agent's thread: O(1), no I/O)."""
        with self._cond:
            self._events += 1
            if self._events == self._wake_at:
                self._cond.notify_all()

    def _run(self) -> None:
        seen_events, last_version = 0, self._checkpointed
        last_snapshot = last_beat = 0.0
        gap_needed = MIN_SNAPSHOT_GAP
        while True:
            with self._cond:
                self._cond.wait_for(
                    lambda: self._stop or self._events >= self._wake_at, timeout=self._every
                )
                if self._stop:
                    return
                seen_events = self._events
                self._wake_at = seen_events + self._burst
            gap = gap_needed - (time.monotonic() - last_snapshot)
            if gap > 0 and self._sleep(gap):
                return
            version = (seen_events, self._version())
            if version != last_version:
                started = time.monotonic()
                self.snapshot()
                last_version, last_snapshot = version, time.monotonic()
                gap_needed = max(MIN_SNAPSHOT_GAP, (last_snapshot - started) / MAX_BUSY_SHARE)
            if time.monotonic() - last_beat >= HEARTBEAT_EVERY:
                last_beat = time.monotonic()
                self._heartbeat()

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` unless closed meanwhile; True when closed."""
        with self._cond:
            return self._cond.wait_for(lambda: self._stop, timeout=seconds)

    def _register(self) -> bool:
        """List this atlas for the dashboard; False (logged) when the database refused.

        A refusal (a busy or briefly unreachable database) is retried by the next heartbeat
        and by ``close``: an atlas with no events is listed by nothing else, so one failed
        attempt would leave it "unregistered" for good.
        """
        try:
            self.db.atlases.register(self.atlas_id, name=self._name, kind="live")
        except AtlasError as exc:
            log.warning("recorded atlas not registered yet: %s", exc)
            return False
        return True

    def _heartbeat(self) -> None:
        if not self._registered:
            self._registered = self._register()
            return
        try:
            self.db.atlases.heartbeat(self.atlas_id)
        except AtlasError as exc:  # a missed heartbeat only ages the "live" badge
            log.warning("recorder heartbeat failed: %s", exc)

    def _version(self) -> tuple[object, ...]:
        """Changes whenever the atlas does, also through calls that publish no event."""
        stats = self.atlas.stats()
        return (
            stats["nodes"],
            stats["edges"],
            stats["pinned"],
            stats["weight_mean"],
            tuple(stats["by_status"].values()),
        )


def _check(snapshot_every: float, snapshot_events: int, keep_snapshots: int) -> None:
    check.in_range(snapshot_every, "snapshot_every", 0.1, 3600)
    check.positive_int(snapshot_events, "snapshot_events", high=1_000_000)
    check.positive_int(keep_snapshots, "keep_snapshots", high=1_000)
