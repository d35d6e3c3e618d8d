"""The dashboard's live system: one atlas shared by every browser session.

It bundles what the pages need around the atlas: a fast-forward clock (wall time plus
whatever the demo or the user skipped ahead, so decay can be watched in minutes), the
event ring buffer, the demo player, the restore ledger and, when the database opens,
an ``EventSink`` recording everything so the "recorded" views and the eviction log's
database source have data.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_core.context import ParserUnavailable
from memory_core.context import warm as warm_context
from memory_core.dashboard.activity import SharedActivity
from memory_core.dashboard.buffer import EventBuffer
from memory_core.dashboard.conflict_view import desk_for
from memory_core.dashboard.context_live import connect_context_review
from memory_core.dashboard.demo import DEMO_CONFIG, DEMO_PRESET, DemoPlayer
from memory_core.dashboard.eviction_view import RestoreLedger
from memory_core.embedding.base import Embedder
from memory_core.embedding.registry import DEFAULT_EMBEDDER, EMBEDDERS, make_embedder
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import Clock, SystemClock
from memory_core.engine.config import AtlasConfig
from memory_core.errors import AtlasError, InputError

if TYPE_CHECKING:
    from memory_core.store.engine import Database
    from memory_core.store.records import SnapshotInfo
    from memory_core.store.sink import EventSink

log = logging.getLogger(__name__)

EMBEDDER_ENV = "ATLAS_DASHBOARD_EMBEDDER"
"""``minilm`` (default) or ``hashing`` (fast fake for UI tests); read when the system is built."""
RECORD_ENV = "ATLAS_DASHBOARD_RECORD"
"""``0`` keeps the live atlas out of the database; anything else records it."""
LIVE_ATLAS_NAME = "dashboard live atlas"


class FastForwardClock:
    """Wall time plus an offset that only grows; thread-safe.

    It remembers when each skip happened, so an atlas time it handed out can be turned
    back into the real time it happened at (audit trails show both).
    """

    __slots__ = ("_base", "_lock", "_offset", "_skips", "_started")

    def __init__(self, base: Clock | None = None) -> None:
        self._base = base or SystemClock()
        self._offset = 0.0
        self._lock = threading.Lock()
        self._started = self._base.now()
        self._skips: list[tuple[float, float]] = []
        """(atlas time right after a skip, offset from then on), oldest first."""

    def now(self) -> float:
        return self._base.now() + self._offset

    @property
    def offset(self) -> float:
        """Seconds skipped ahead of the base clock so far."""
        return self._offset

    def advance(self, seconds: float) -> float:
        if not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
            raise InputError("seconds", f"must be a finite number >= 0, got {seconds!r}")
        with self._lock:
            self._offset += float(seconds)
            self._skips.append((self._base.now() + self._offset, self._offset))
        return self.now()

    def wall_time(self, atlas_time: float) -> float | None:
        """The real (epoch) time at which this clock read ``atlas_time``; None when it was
        before this clock started (another process's time, which this one cannot undo)."""
        with self._lock:
            skips = list(self._skips)
        offset = 0.0
        for after, total in skips:
            if atlas_time < after:
                break
            offset = total
        wall = atlas_time - offset
        return wall if wall >= self._started - 1.0 else None


def embedder_name() -> str:
    """The embedder named by ``$ATLAS_DASHBOARD_EMBEDDER`` (read now, not at import)."""
    name = os.environ.get(EMBEDDER_ENV, DEFAULT_EMBEDDER).strip().lower()
    if name not in EMBEDDERS:
        raise InputError(EMBEDDER_ENV, f"must be one of {', '.join(EMBEDDERS)}, got {name!r}")
    return name


def embedder_from_env() -> Embedder:
    """The dashboard's embedder; the tuning page's replays use the same one (by name)."""
    return make_embedder(embedder_name(), field=EMBEDDER_ENV)


@dataclass(slots=True)
class Recording:
    """The database side of the live system; ``error`` explains why it is missing."""

    db: Database | None
    sink: EventSink | None
    error: str | None

    @property
    def atlas_id(self) -> str | None:
        return self.sink.atlas_id if self.sink else None


class LiveSystem:
    """The shared live atlas and everything attached to it."""

    def __init__(
        self,
        *,
        embedder: Embedder,
        config: AtlasConfig | None = None,
        clock: FastForwardClock | None = None,
        record: bool = False,
        database_url: str | None = None,
    ) -> None:
        self.clock = clock or FastForwardClock()
        self.atlas = ElasticMemoryAtlas(config or DEMO_CONFIG, embedder=embedder, clock=self.clock)
        self.preset = DEMO_PRESET if config is None else "custom"
        """Name of the parameters the live atlas runs under (shown on the demo page)."""
        self.buffer = EventBuffer()
        self.atlas.subscribe(self.buffer)
        self.player = DemoPlayer(self.atlas, self.clock, on_purge=self.buffer.discard_sessions)
        self.ledger = RestoreLedger()
        self.activity = SharedActivity()
        """Who changed the live atlas last (every browser session shares it)."""
        self.recording = (
            _open_recording(self.atlas, database_url)
            if record
            else Recording(None, None, "recording is off")
        )
        connect_context_review(self.player.rules, lambda: desk_for(self.atlas, self.recording.db))

    @classmethod
    def from_env(cls) -> LiveSystem:
        """Build with the environment's embedder and recording choice (read at call time)."""
        record = os.environ.get(RECORD_ENV, "1").strip() != "0"
        embedder = embedder_from_env()
        # The model's first call is slow: pay it behind the spinner (past any cache).
        getattr(embedder, "inner", embedder).embed(["warm up"])
        if DEMO_CONFIG.context_graph:  # so are the context graph's parser and examples
            try:
                warm_context(embedder)
            except ParserUnavailable as exc:
                log.warning("the task context graph will not parse turns: %s", exc)
        system = cls(embedder=embedder, record=record)
        # What is loaded now (modules, models, the parser) lives as long as the server:
        # out of the collector's way, a full collection walks only what pages create since
        # (~650k objects otherwise, 0.15-0.5 s of CPU holding the GIL each time).
        gc.freeze()
        return system

    def apply_preset(self, name: str, config: AtlasConfig) -> None:
        """Run the live atlas under ``config`` from now on, shown as ``name``."""
        self.atlas.reconfigure(config)
        self.preset = name

    def watch_key(self) -> tuple[object, ...]:
        """Changes whenever a page showing the live atlas must redraw because of someone
        else: a recorded change, the player's state or conversation, the preset."""
        status = self.player.status()
        return (self.activity.count, status.state, status.conversation_id, self.preset)

    def skip_ahead(self, hours: float) -> dict[str, int]:
        """Let ``hours`` pass on the atlas clock and run a decay pass; returns evictions."""
        if not isinstance(hours, (int, float)) or not 0 <= hours <= 24 * 365:
            raise InputError("hours", f"must be a number in [0, 8760], got {hours!r}")
        self.clock.advance(hours * 3600.0)
        return self.atlas.decay()

    def recording_status(self) -> dict[str, Any]:
        """Health of the database recording for the sidebar badge."""
        sink = self.recording.sink
        if sink is None:
            return {"healthy": False, "error": self.recording.error}
        return sink.status()

    def save_snapshot_to_db(self, label: str) -> SnapshotInfo:
        """Store the live atlas's snapshot in the database (it can then be browsed as
        recorded), its conversations' task context graphs in the same file and in the
        context graph tables."""
        db, atlas_id = self.recording.db, self.recording.atlas_id
        if db is None or atlas_id is None:
            raise InputError("database", f"not available: {self.recording.error}")
        from memory_core.dashboard.context_live import live_graphs, save_graphs, snapshot_sections
        from memory_core.store.recording import record_snapshot

        graphs = live_graphs(self.player.rules)
        info = record_snapshot(
            self.atlas,
            db.snapshots,
            atlas_id=atlas_id,
            label=label,
            sections=lambda: snapshot_sections(graphs),
        )
        save_graphs(graphs, db.context_graphs, atlas_id)
        return info

    def close(self) -> None:
        self.player.close()
        if self.recording.sink is not None:
            self.recording.sink.close()
        if self.recording.db is not None:
            self.recording.db.close()


def _open_recording(atlas: ElasticMemoryAtlas, url: str | None) -> Recording:
    """Open the database and attach a sink; a failure leaves the atlas working in memory."""
    from memory_core.store.engine import open_database
    from memory_core.store.sink import EventSink

    try:
        db = open_database(url)
    except AtlasError as exc:
        log.warning("dashboard runs without a database: %s", exc)
        return Recording(None, None, str(exc))
    sink = EventSink(db, atlas_name=LIVE_ATLAS_NAME).attach(atlas)
    return Recording(db, sink, None)
