"""HNSW inserts off the caller's path: one background thread folds new vectors in.

An add to a large atlas stores its vector and leaves it *pending* in the vector index
(``VectorIndex.pending``): searchable at once, scored exactly beside the graph. The
insert into the HNSW graph, about as costly as a search, is made here when the index
has had no add for ``FOLD_AFTER``, so an agent's add returns without it and the insert
runs while the agent does something else (embeds its next text, waits for its model).
A next add that comes sooner inserts the pending vector itself, before its own, as it
did before this thread existed: calls back to back cost what they cost, and never wait
for this thread's insert nor for this thread to get a core on a busy machine.

One daemon thread serves the whole process, started on first use. It takes only the
vector index's own lock, one insert at a time (~0.4 ms at 100k), never the atlas's. A
snapshot folds what is left first, so the graph is always the one an insert per add
builds. A fork and the interpreter's exit wait for the insert under way.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import faiss

from memory_core.engine.index import VectorIndex

FOLD_AFTER = 0.003
"""Seconds without an add before the folding thread inserts an index's pending vector:
about half the shortest time between an agent's calls (each embeds its text first, ~5-15
ms with MiniLM), so the insert is done before the next one. Adds closer together are a
loop (an import, a replay, a benchmark with vectors given), whose next add makes the
insert itself, as before: a loop gains nothing, and loses nothing to a thread hand-off."""


class _Folder:
    """The process's folding thread and the indexes waiting for it."""

    __slots__ = ("_busy", "_due", "_thread", "_wake", "cpu_ns")

    def __init__(self) -> None:
        self._due: dict[int, tuple[float, VectorIndex]] = {}
        """id(index) -> (when to fold it, the index)."""
        self._wake = threading.Condition()
        self._busy = threading.Lock()
        """Held while folding: a fork waits for it, so no index lock is held in the child."""
        self._thread: threading.Thread | None = None
        self.cpu_ns = 0
        """CPU time the folding thread has spent folding (written by it alone)."""

    def schedule(self, index: VectorIndex) -> None:
        with self._wake:
            idle = not self._due  # else the thread wakes for the earliest and looks again
            self._due[id(index)] = (time.monotonic() + FOLD_AFTER, index)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="atlas-fold", daemon=True)
                self._thread.start()
            if idle:
                self._wake.notify()

    def _next(self) -> VectorIndex:
        """The index whose time has come (waits for one)."""
        with self._wake:
            while True:
                if not self._due:
                    self._wake.wait()
                    continue
                key, (at, index) = min(self._due.items(), key=lambda item: item[1][0])
                left = at - time.monotonic()
                if left <= 0:
                    del self._due[key]
                    return index
                self._wake.wait(left)

    def _run(self) -> None:
        faiss.omp_set_num_threads(1)  # a new thread's OpenMP default is every core
        while True:
            index = self._next()
            with self._busy:
                started = time.thread_time_ns()
                try:
                    index.fold()
                except Exception:  # the index's next add folds again and raises it there
                    continue
                finally:
                    self.cpu_ns += time.thread_time_ns() - started

    def pause(self) -> None:
        self._busy.acquire()

    def resume(self) -> None:
        self._busy.release()

    def forget(self) -> None:
        """In a forked child: the parent's thread does not exist here."""
        self._busy.release()
        self._due, self._wake, self._thread = {}, threading.Condition(), None


_FOLDER = _Folder()
os.register_at_fork(
    before=_FOLDER.pause, after_in_parent=_FOLDER.resume, after_in_child=_FOLDER.forget
)
# At exit, wait for the insert under way: a daemon thread still inside FAISS while the
# interpreter finalises and the process exits aborts it (tests/integration/engine).
atexit.register(_FOLDER.pause)


@contextmanager
def paused() -> Iterator[None]:
    """No fold runs on the folding thread inside (it finishes the insert under way
    first): the newest add's vector stays pending until the next add or a snapshot.
    What a fork does; a test uses it to search, snapshot or delete a pending vector."""
    _FOLDER.pause()
    try:
        yield
    finally:
        _FOLDER.resume()


def folding_cpu_ns() -> int:
    """CPU time the folding thread has spent since the process started: the inserts an
    add no longer makes on its caller's thread, for a benchmark to report beside it."""
    return _FOLDER.cpu_ns


def fold_later(index: VectorIndex) -> None:
    """Have ``index``'s pending vector inserted into its graph on the folding thread once
    no add has come for ``FOLD_AFTER``."""
    if index.pending:
        _FOLDER.schedule(index)
