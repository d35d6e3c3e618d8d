"""The event sink: engine events to the database without the engine ever waiting on I/O.

The atlas calls the sink synchronously for every event; the sink only appends to a
deque under a short lock. A daemon thread encodes events (privacy policy, PII scrubbing)
and writes them in batches, each batch in one transaction, every ``flush_interval``
seconds or as soon as ``batch_size`` events are waiting. A write that falls due while
the agent is in the middle of a call waits for the call's events to stop (``SETTLE``):
encoding and the database driver's Python hold the GIL, and an agent's call that wants
it back (after every FAISS search) would wait up to the interpreter's 5 ms switch
interval; in the gap between two calls the write costs the agent nothing.

When the database fails (unreachable, locked, full) the batch stays in flight and is
retried with exponential backoff while new events keep buffering; ``healthy`` turns
false and ``last_error`` says why, so the dashboard can warn. Only if the buffer bound
is reached are the oldest waiting events dropped (``dropped`` counts them); an event the
database refuses outright (``rejected``) is logged and skipped so it cannot block the
rest. A hard kill loses at most the events not yet written: those of the last flush
interval.
"""

from __future__ import annotations

import atexit
import logging
import math
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from memory_core.engine.events import AtlasEvent, Subscriber
from memory_core.errors import InputError, StoreUnavailableError
from memory_core.store.pii import PiiScrubber
from memory_core.store.privacy import EventEncoder, LogContent, parse_log_content
from memory_core.store.records import EventRecord, check_text
from memory_core.store.repositories import Store

log = logging.getLogger(__name__)

DEFAULT_FLUSH_INTERVAL = 1.0
DEFAULT_BATCH_SIZE = 500
DEFAULT_MAX_BUFFER = 1_000_000
HEARTBEAT_SECONDS = 10.0
SETTLE = 0.003
"""Seconds without a new event before a due write starts (at most one more flush interval
later, so a steady stream of events is still written): one call's events come within
a millisecond or two, and an agent's calls are further apart (each embeds its text
first, ~5-15 ms with MiniLM)."""


def settle_wait(now: float, due: float, last_event: float, interval: float) -> float:
    """Seconds a writer still waits at ``now`` for a write due at ``due``: until then, and
    after it until ``SETTLE`` has passed since ``last_event``, but never past ``due +
    interval``; 0 or less when it may write."""
    if now < due:
        return due - now
    return min(last_event + SETTLE, due + interval) - now


class Subscribable(Protocol):
    """What the sink needs of an atlas."""

    def subscribe(self, callback: Subscriber) -> Callable[[], None]: ...


def _positive(name: str, value: float, *, integer: bool = False) -> None:
    bad_type = isinstance(value, bool) or not isinstance(value, int if integer else (int, float))
    if bad_type or not math.isfinite(value) or value <= 0:
        kind = "an integer" if integer else "a finite number"
        raise InputError(name, f"must be {kind} > 0, got {value!r}")


class EventSink:
    """Batched, retrying background writer from an atlas's events to a ``Store``."""

    def __init__(
        self,
        store: Store,
        *,
        atlas_id: str | None = None,
        atlas_name: str = "atlas",
        log_content: LogContent | str = LogContent.FULL,
        scrubber: PiiScrubber | None = None,
        user_id: str | None = None,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_buffer: int = DEFAULT_MAX_BUFFER,
        retry_initial: float = 0.5,
        retry_max: float = 30.0,
    ) -> None:
        _positive("flush_interval", flush_interval)
        _positive("batch_size", batch_size, integer=True)
        _positive("max_buffer", max_buffer, integer=True)
        _positive("retry_initial", retry_initial)
        _positive("retry_max", retry_max)
        self.atlas_id = atlas_id or uuid.uuid4().hex
        self.atlas_name = atlas_name
        check_text("atlas_id", self.atlas_id, 64)
        check_text("atlas_name", atlas_name)
        self._store = store
        self._encoder = EventEncoder(
            self.atlas_id, parse_log_content(log_content), scrubber, user_id
        )
        self._interval = float(flush_interval)
        self._batch_size = batch_size
        self._max_buffer = max_buffer
        self._retry = (float(retry_initial), float(retry_max))
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, AtlasEvent]] = deque()
        self._inflight: list[tuple[int, AtlasEvent]] = []
        self._seq = 0
        self._written = 0
        self._dropped = 0
        self._rejected = 0
        self._failures = 0
        self._healthy = True
        self._last_error: str | None = None
        self._draining = False
        self._stop = False
        self._abandon = False
        self._closed = False
        self._registered = False
        self._last_heartbeat = 0.0
        self._last_event = 0.0
        self._unsubscribe: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name=f"atlas-sink-{self.atlas_id[:8]}")
        self._thread.daemon = True
        self._thread.start()
        atexit.register(self._at_exit)

    # -- producer side (the engine's thread) -----------------------------------
    def __call__(self, event: AtlasEvent) -> None:
        """Enqueue one event; O(1), never touches the database."""
        with self._cond:
            if self._closed:
                self._dropped += 1
                return
            self._seq += 1
            self._last_event = time.monotonic()
            if len(self._queue) >= self._max_buffer:
                self._queue.popleft()
                self._dropped += 1
            self._queue.append((self._seq, event))
            if len(self._queue) == self._batch_size:
                self._cond.notify_all()

    def attach(self, atlas: Subscribable) -> EventSink:
        """Subscribe to ``atlas``; ``close`` unsubscribes."""
        if self._unsubscribe is not None:
            raise InputError("atlas", "this sink is already attached to an atlas")
        self._unsubscribe = atlas.subscribe(self)
        return self

    # -- status for the UI -----------------------------------------------------
    @property
    def healthy(self) -> bool:
        """False while the last write failed (events are buffered and retried)."""
        return self._healthy

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._queue) + len(self._inflight)

    @property
    def written(self) -> int:
        return self._written

    @property
    def sequence(self) -> int:
        """How many events were handed to the sink so far: the ``seq`` of the newest."""
        return self._seq

    @property
    def dropped(self) -> int:
        """Events lost because the buffer bound was hit or the sink was closed."""
        return self._dropped

    @property
    def rejected(self) -> int:
        """Events the database refused to store (logged with the reason)."""
        return self._rejected

    @property
    def last_error(self) -> str | None:
        return self._last_error

    def status(self) -> dict[str, Any]:
        """Everything a health badge needs, in one consistent read."""
        with self._cond:
            return {
                "atlas_id": self.atlas_id,
                "healthy": self._healthy,
                "pending": len(self._queue) + len(self._inflight),
                "written": self._written,
                "dropped": self._dropped,
                "rejected": self._rejected,
                "failures": self._failures,
                "last_error": self._last_error,
                "closed": self._closed,
            }

    # -- flushing and shutdown -------------------------------------------------
    def flush(self, timeout: float = 30.0) -> None:
        """Block until every event enqueued before the call is written.

        Raises:
            StoreUnavailableError: not done within ``timeout`` seconds (events stay
                buffered and keep being retried).
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            target = self._seq
            self._draining = True
            self._cond.notify_all()
            while self._oldest_pending() <= target:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._thread.is_alive():
                    raise StoreUnavailableError(
                        f"event sink: {len(self._queue) + len(self._inflight)} events not written "
                        f"after {timeout:g}s; last error: {self._last_error}"
                    )
                self._cond.wait(remaining)

    def close(self, timeout: float = 10.0) -> None:
        """Unsubscribe, write what is buffered and stop the writer; idempotent.

        If the database stays unavailable for ``timeout`` seconds, the remaining
        events are given up and logged as lost.
        """
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout)
        if self._thread.is_alive():
            with self._cond:
                self._abandon = True
                lost = len(self._queue) + len(self._inflight)
                self._cond.notify_all()
            log.error("event sink closed with %d events unwritten: %s", lost, self._last_error)
            self._thread.join(1.0)
        atexit.unregister(self._at_exit)

    def _at_exit(self) -> None:
        self.close(timeout=5.0)

    def __enter__(self) -> EventSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writer thread ---------------------------------------------------------
    def _oldest_pending(self) -> float:
        if self._inflight:
            return self._inflight[0][0]
        return self._queue[0][0] if self._queue else math.inf

    def _run(self) -> None:
        delay = 0.0
        records: list[EventRecord] | None = None  # the in-flight batch, encoded once
        while True:
            with self._cond:
                self._wait(delay)
                if self._abandon or (self._stop and not self._queue and not self._inflight):
                    return
                if not self._inflight:
                    take = min(self._batch_size, len(self._queue))
                    self._inflight = [self._queue.popleft() for _ in range(take)]
                    records = None
                batch = list(self._inflight)
                if not batch:
                    self._draining = False  # a flush of nothing: back to the interval
            if not batch:
                self._maybe_heartbeat()
                continue
            if records is None:
                records = self._encode(batch)
            try:
                self._write(records)
            except Exception as exc:  # every failure is retried; the engine must not notice
                delay = min(self._retry[1], delay * 2 if delay else self._retry[0])
                with self._cond:
                    self._healthy = False
                    self._failures += 1
                    self._last_error = f"{type(exc).__name__}: {exc}"
                    self._cond.notify_all()
                log.warning("event sink write failed (retry in %.1fs): %s", delay, exc)
                continue
            delay = 0.0
            records = None
            with self._cond:
                self._inflight = []
                self._healthy = True
                if not self._queue:
                    self._draining = False
                self._cond.notify_all()
            self._maybe_heartbeat()

    def _wait(self, delay: float) -> None:
        """Sleep until there is a reason to write (called with the lock held)."""
        if delay:  # backing off: wake early only to stop
            end = time.monotonic() + (min(delay, 0.2) if self._stop else delay)
            while not self._abandon and (remaining := end - time.monotonic()) > 0:
                self._cond.wait(remaining)
            return
        end = time.monotonic() + self._interval
        while not (self._stop or self._draining or len(self._queue) >= self._batch_size):
            remaining = settle_wait(time.monotonic(), end, self._last_event, self._interval)
            if remaining <= 0:
                return
            self._cond.wait(remaining)

    def _encode(self, batch: list[tuple[int, AtlasEvent]]) -> list[EventRecord]:
        records = []
        for seq, event in batch:
            try:
                records.append(self._encoder.encode(event, seq=seq))
            except Exception:  # a malformed event is logged and skipped, not retried forever
                log.exception("event sink cannot encode %r; skipped", event)
                self._done(rejected=1)
            # hand the GIL to the engine's thread between events: a batch encoded in one go
            # holds it for milliseconds, and a write arriving meanwhile would wait (p99)
            time.sleep(0)
        return records

    def _write(self, records: list[EventRecord]) -> None:
        """Write ``records``, removing each from the list once it is done.

        A batch the database refuses for a reason other than being unavailable (a value
        it cannot store) is retried one record at a time, so that one bad record is
        skipped (``rejected``) instead of blocking every event after it.
        """
        if not self._registered:
            self._store.atlases.register(self.atlas_id, name=self.atlas_name, kind="live")
            self._registered = True
            self._last_heartbeat = time.monotonic()
        try:
            self._store.events.append(records)
            self._done(written=len(records))
            records.clear()
            return
        except StoreUnavailableError:
            raise
        except Exception as exc:
            log.warning("event sink: batch refused (%s); writing one by one", exc)
        while records:
            try:
                self._store.events.append(records[:1])
                self._done(written=1)
            except StoreUnavailableError:
                raise
            except Exception as exc:
                log.error("event sink: %s event refused and skipped: %s", records[0].type, exc)
                self._done(rejected=1)
            records.pop(0)

    def _done(self, *, written: int = 0, rejected: int = 0) -> None:
        with self._cond:
            self._written += written
            self._rejected += rejected

    def _maybe_heartbeat(self) -> None:
        if not self._registered or time.monotonic() - self._last_heartbeat < HEARTBEAT_SECONDS:
            return
        self._last_heartbeat = time.monotonic()
        try:
            self._store.atlases.heartbeat(self.atlas_id)
        except Exception as exc:  # a missed heartbeat only ages the "last seen" badge
            log.warning("event sink heartbeat failed: %s", exc)
