"""A new memory's links, made at once or left to a worker thread (issue #26).

An add's links come from one search of the vector index for the new memory's nearest
neighbours in its session (``retrieval.nearest``). Over an HNSW index (an atlas past
``hnsw_threshold``) that search is ~80 % of the add's CPU, so ``add`` there leaves it
*pending*: the memory is stored, indexed and announced (``MemoryAdded``) at once, and
its links (``similar_to``, the session's ``before``, the caller's ``links_to``, in that
order) are made by the first of:

- the process's link worker, woken by the add (off the caller's path when a core is
  free between the agent's calls);
- anything else that takes the atlas's lock (``SettlingLock``): a retrieve, a delete,
  a snapshot, the next add, ``settle()``. So no call ever sees the graph without the
  links a synchronous add would have made, and a memory is never evicted or deleted
  with its links still pending;
- the add itself, before a step of its own that reads or removes memories (a family
  fold, a capacity eviction, a decay pass).

The pending search runs over the memories that existed when the add was made: nothing
else can change the index before it runs (every other call settles it first). Two
things differ from a synchronous add, by design and counted: the new memory's own
vector is already in the graph (HNSW may route through it; it is dropped from the
results), and the links travel as ``MemoryLinked`` events after ``MemoryAdded``
(whose ``links`` is empty) instead of inside it, so a follower applies the same
relations in the same order. A hard kill between the add and its links loses the
links, never the memory (it was announced first).

Whether to merge is decided on the caller's path, by a narrow search
(``MERGE_CHECK_EF``): only when its best match is far below ``merge_threshold``
(``MERGE_CHECK_MARGIN``) are the links deferred; otherwise the add searches at full
breadth and links at once, as before. A duplicate the narrow search missed by more
than the margin would be linked instead of merged; the worker's full search counts
such cases (``late_duplicates`` in ``stats()``).
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

from memory_core.engine.events import MemoryLinked
from memory_core.engine.model import Relation
from memory_core.engine.retrieval import nearest
from memory_core.engine.table import ACTIVE_CODE

if TYPE_CHECKING:
    from memory_core.engine.state import AtlasState

log = logging.getLogger(__name__)

MERGE_CHECK_EF = 16
"""HNSW search breadth of the merge check of an add whose links are deferred: a
near-duplicate (cosine >= ``merge_threshold``) stands far above its surroundings, so a
narrow beam reaches it (docs/performance.md, session 13: the same merge decisions)."""
MERGE_CHECK_MARGIN = 0.1
"""The narrow search's best match must be this far below ``merge_threshold`` for the
links to be deferred; closer, the add searches at full breadth and links at once."""


@dataclass(slots=True, frozen=True)
class PendingLinks:
    """What an add needs to make its links later: exactly what it would have used."""

    slot: int
    node_id: str
    vector: np.ndarray
    """The float32 vector the add was given (the index holds a float16 rounding)."""
    session: int
    previous: int | None
    """The session's previous memory, linked ``before`` this one (None: no such link)."""
    links_to: tuple[int, ...]


def make_links(
    state: AtlasState,
    slot: int,
    sims: np.ndarray,
    neighbours: np.ndarray,
    previous: int | None,
    links_to: tuple[int, ...],
) -> list[tuple[int, int, Relation, float]]:
    """Link a new memory: ``similar_to`` its best neighbours (best first, up to
    ``max_auto_links``, down to ``link_threshold``), ``before`` from ``previous``, then
    ``related_to`` each of ``links_to``; returns the relations made, in that order."""
    cfg, edges = state.config, state.edges
    made: list[tuple[int, int, Relation, float]] = []
    for sim, other in zip(sims.tolist(), neighbours.tolist(), strict=True):
        if len(made) >= cfg.max_auto_links or sim < cfg.link_threshold:
            break
        made.append((slot, other, Relation.SIMILAR_TO, float(sim)))
    if previous is not None:
        made.append((previous, slot, Relation.BEFORE, 1.0))
    made.extend((slot, target, Relation.RELATED_TO, 1.0) for target in links_to)
    for source, target, relation, strength in made:
        edges.link(source, target, relation, strength)
    return made


class PendingQueue:
    """The one add whose links wait (at most one: every other call settles it first),
    and the atlas lock that settles it."""

    __slots__ = ("__weakref__", "_state", "lock", "pending")

    def __init__(self, state: AtlasState) -> None:
        self._state = state
        self.pending: PendingLinks | None = None
        self.lock = SettlingLock(self)

    def defer(self, links: PendingLinks) -> None:
        """Leave ``links`` for the worker (or the next call); the caller holds the lock."""
        self.settle()
        self.pending = links
        _WORKER.wake(self)

    def settle(self) -> None:
        """Make the pending links now (the caller holds the atlas's lock)."""
        links, self.pending = self.pending, None
        if links is None:
            return
        try:
            _settle(self._state, links)
        except Exception:  # a write already returned: nobody to raise to
            self._state.counters["link_failures"] += 1
            log.exception("links of memory %s could not be made", links.node_id)


def _settle(state: AtlasState, links: PendingLinks) -> None:
    cfg, table = state.config, state.table
    sims, neighbours = nearest(
        state,
        links.vector,
        cfg.max_auto_links + 2,
        links.session,
        ef_search=cfg.hnsw_link_ef_search,
    )
    others = neighbours != links.slot
    sims, neighbours = sims[others], neighbours[others]
    if len(sims) and sims[0] >= cfg.merge_threshold and table.status[neighbours[0]] == ACTIVE_CODE:
        state.counters["late_duplicates"] += 1
    made = make_links(state, links.slot, sims, neighbours, links.previous, links.links_to)
    if state.bus.wants(MemoryLinked):
        now = state.clock.now()
        for source, target, relation, strength in made:
            state.bus.publish(
                MemoryLinked(
                    at=now,
                    session_id=state.session_of(source),
                    node_id=str(table.ids[source]),
                    target_id=str(table.ids[target]),
                    relation=relation.value,
                    strength=strength,
                )
            )


class SettlingLock:
    """The atlas's re-entrant lock: whoever takes it settles the pending links first, so
    every call sees the graph a synchronous add would have made."""

    __slots__ = ("_inner", "_queue")

    def __init__(self, pending: PendingQueue) -> None:
        self._inner = threading.RLock()
        self._queue = pending

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._inner.acquire(blocking, timeout)
        if got and self._queue.pending is not None:
            try:
                self._queue.settle()
            except BaseException:
                self._inner.release()
                raise
        return got

    def release(self) -> None:
        self._inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self._inner.release()


class _Worker:
    """The process's link worker: one daemon thread, started on the first deferred add,
    settling each atlas it is woken for under that atlas's lock."""

    __slots__ = ("_busy", "_lock", "_queue", "_stopped", "_thread", "cpu_ns")

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[weakref.ref[PendingQueue] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._busy = threading.Lock()
        self._stopped = False
        self.cpu_ns = 0
        """CPU time the worker has spent settling links (written by it alone)."""

    def wake(self, pending: PendingQueue) -> None:
        if self._stopped:
            return  # the interpreter is exiting: the next call (or none) settles it
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="atlas-links", daemon=True
                    )
                    self._thread.start()
        self._queue.put(weakref.ref(pending))

    def _run(self) -> None:
        faiss.omp_set_num_threads(1)  # a new thread's OpenMP default is every core
        while (ref := self._queue.get()) is not None:
            pending = ref()
            if pending is None or pending.pending is None:
                continue
            with self._busy:
                if self._stopped:
                    return
                started = time.thread_time_ns()
                with pending.lock:  # taking it settles the links; counted before it is let go
                    self.cpu_ns += time.thread_time_ns() - started

    def stop(self) -> None:
        """At exit: wait for a settle under way (a daemon thread still inside FAISS while
        the interpreter finalises aborts the process) and start no other."""
        with self._busy:
            self._stopped = True
        self._queue.put(None)

    def forget(self) -> None:
        """In a forked child: the parent's thread does not exist here."""
        self.__init__()  # type: ignore[misc]


def worker_cpu_ns() -> int:
    """CPU time the link worker has spent since the process started: a benchmark timing
    an add by its own thread's CPU reports this beside it, so deferred work stays seen."""
    return _WORKER.cpu_ns


_WORKER = _Worker()
atexit.register(_WORKER.stop)
os.register_at_fork(after_in_child=_WORKER.forget)
