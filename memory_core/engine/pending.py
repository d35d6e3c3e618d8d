"""An add's HNSW insert, made after the call returns (issue #26).

Over an HNSW index (an atlas past ``hnsw_threshold``) an add's graph insert is about a
quarter of its CPU (docs/performance.md, session 13). ``add`` there makes its merge /
link search, stores the memory, links and announces it as before, and leaves the insert
of its vector into the index *pending*. The insert is made by the first of:

- the process's insert worker, woken by the add (off the caller's path when a core is
  free between the agent's calls);
- anything else that takes the atlas's lock (``SettlingLock``): a retrieve, the next add,
  a delete, a snapshot, ``settle()``; so every call sees the index a synchronous add would
  have left, and the next add's search runs over the same graph;
- the add itself, before a step of its own that inserts or removes vectors (a family
  fold's summary, a capacity eviction; a decay pass takes the lock).

FAISS's HNSW graph depends on the order of the inserts alone (its level generator is
seeded per index), and that order cannot change here (one insert pending at a time, made
before anything else touches the index): the graph, every search and every result are
those of an insert per add. The atlas's table, BM25 index, relations and events are made
at once, as before; only the vector index lags, and nothing reads it without the lock.
A hard kill loses nothing that is not lost today: the memory and its vector are in the
``MemoryAdded`` event, and a snapshot's index is taken under the lock. At exit and before
a fork the worker's insert under way is waited for (a thread inside FAISS at exit aborts
the process; a child forked meanwhile would inherit a lock held by a thread it lacks).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import faiss
import numpy as np

from memory_core.engine import forgetting
from memory_core.engine.model import EvictionReason

if TYPE_CHECKING:
    from memory_core.engine.state import AtlasState

log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class PendingInsert:
    """A stored memory whose vector is not in the vector index yet."""

    slot: int
    node_id: str
    vector: np.ndarray
    """The add's float32 vector, normalised (``check_vectors`` made it: nobody else holds
    it); the index rounds it to float16 as it always does."""


class Pending:
    """The one insert that waits (at most one: every other call makes it first), and
    the atlas lock that makes it."""

    __slots__ = ("__weakref__", "_state", "insert", "lock")

    def __init__(self, state: AtlasState) -> None:
        self._state = state
        self.insert: PendingInsert | None = None
        self.lock = SettlingLock(self)

    def defer(self, insert: PendingInsert) -> None:
        """Leave ``insert`` to the worker (or the next call); the caller holds the lock."""
        self.settle()
        self.insert = insert
        _WORKER.wake(self)

    def settle(self) -> None:
        """Make the pending insert now (the caller holds the atlas's lock). If FAISS
        refuses it, the memory is taken out again (its write already returned: nobody is
        left to raise to), announced as evicted, and counted."""
        insert, self.insert = self.insert, None
        if insert is None:
            return
        state = self._state
        try:
            state.vectors.add(np.array([insert.slot]), insert.vector[None, :])
        except Exception:
            log.exception("memory %s could not be indexed; it is removed", insert.node_id)
            state.counters["insert_failures"] += 1
            slots = np.array([insert.slot])
            forgetting.remove(state, slots, EvictionReason.FORGOTTEN, state.clock.now())


class SettlingLock:
    """The atlas's re-entrant lock: whoever takes it makes the pending insert first, so
    every call sees the index a synchronous add would have left."""

    __slots__ = ("_inner", "_pending")

    def __init__(self, pending: Pending) -> None:
        self._inner = threading.RLock()
        self._pending = pending

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._inner.acquire(blocking, timeout)
        if got and self._pending.insert is not None:
            try:
                self._pending.settle()
            except BaseException:
                self._inner.release()
                raise
        return got

    def release(self) -> None:
        self._inner.release()

    def held_here(self) -> bool:
        """Whether the calling thread holds this lock (a fork asks: see ``_Worker.pause``)."""
        owned: bool = self._inner._is_owned()  # type: ignore[attr-defined]  # CPython's RLock
        return owned

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self._inner.release()


_FORK_POLL_S = 0.02
"""How often a fork that waits for the worker checks whether the worker waits for it."""


class _Worker:
    """The process's insert worker: one daemon thread, started by the first deferred
    insert, taking the lock of each atlas it is woken for (which makes the insert)."""

    __slots__ = (
        "_awaited",
        "_busy",
        "_lock",
        "_paused",
        "_queue",
        "_stopped",
        "_thread",
        "cpu_ns",
    )

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[weakref.ref[Pending] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._busy = threading.Lock()
        self._stopped = False
        self._paused = False
        self._awaited: SettlingLock | None = None
        """The atlas lock the worker waits for (holding ``_busy``, no atlas lock yet)."""
        self.cpu_ns = 0
        """CPU time the worker has spent on inserts (written by it alone)."""

    def wake(self, pending: Pending) -> None:
        if self._stopped:
            return  # the interpreter is exiting: the next call (or none) makes it
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="atlas-insert", daemon=True
                    )
                    self._thread.start()
        self._queue.put(weakref.ref(pending))

    def _run(self) -> None:
        faiss.omp_set_num_threads(1)  # a new thread's OpenMP default is every core
        while (ref := self._queue.get()) is not None:
            pending = ref()
            if pending is None or pending.insert is None:
                continue
            with self._busy:
                if self._stopped:
                    return
                started = time.thread_time_ns()
                self._awaited = pending.lock
                with pending.lock:  # taking it makes the insert; counted before letting go
                    self._awaited = None
                    self.cpu_ns += time.thread_time_ns() - started

    def stop(self) -> None:
        """At exit: wait for an insert under way (a daemon thread still inside FAISS while
        the interpreter finalises aborts the process) and start no other."""
        with self._busy:
            self._stopped = True
        self._queue.put(None)

    def pause(self) -> None:
        """Before a fork: wait for an insert under way, however long it takes, so the child
        does not inherit an atlas lock held by a thread it does not have. The one wait that
        would never end is not made: the worker waiting for an atlas lock the forking thread
        holds (it holds no atlas lock then, and cannot take that one before the fork). A
        fixed time limit instead (one second, until session 15) let a fork under load go
        ahead mid-insert and the child hang on the lock."""
        while not self._busy.acquire(timeout=_FORK_POLL_S):
            awaited = self._awaited
            if awaited is not None and awaited.held_here():
                return
        self._paused = True

    def resume(self) -> None:
        """After a fork, in the parent."""
        if self._paused:
            self._paused = False
            self._busy.release()

    def forget(self) -> None:
        """In a forked child: the parent's thread does not exist here."""
        self.__init__()  # type: ignore[misc]


def worker_cpu_ns() -> int:
    """CPU time the insert worker has spent since the process started: a benchmark timing
    an add by its own thread's CPU reports this beside it, so the moved work stays seen."""
    return _WORKER.cpu_ns


_WORKER = _Worker()
atexit.register(_WORKER.stop)
os.register_at_fork(
    before=_WORKER.pause, after_in_parent=_WORKER.resume, after_in_child=_WORKER.forget
)
