"""HNSW inserts off the caller's path: one background thread folds new vectors in.

An add to a large atlas stores its vector and leaves it *pending* in the vector index
(``VectorIndex.pending``): searchable at once, scored exactly beside the graph. The
insert into the HNSW graph, about as costly as a search, is done here afterwards, so the
add returns without it. One daemon thread serves the whole process, started on first
use. It takes only the vector index's own lock, one insert at a time (~0.4 ms at 100k),
never the atlas's: the add that scheduled it goes on with its bookkeeping meanwhile, and
a later call waits only when it reaches the graph while an insert is under way (a real
call embeds its text first, which usually covers that). An index whose fold falls behind
(no free core) folds the oldest itself on its next add (``MAX_PENDING``), and a snapshot
folds what is left first: the graph is always the one an insert per add builds. A fork
and the interpreter's exit wait for the insert under way.
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


class _Folder:
    """The process's folding thread and the indexes waiting for it."""

    __slots__ = ("_busy", "_due", "_thread", "_wake", "cpu_ns")

    def __init__(self) -> None:
        self._due: dict[int, VectorIndex] = {}
        self._wake = threading.Condition()
        self._busy = threading.Lock()
        """Held while folding: a fork waits for it, so no index lock is held in the child."""
        self._thread: threading.Thread | None = None
        self.cpu_ns = 0
        """CPU time the folding thread has spent folding (written by it alone)."""

    def schedule(self, index: VectorIndex) -> None:
        with self._wake:
            self._due[id(index)] = index
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="atlas-fold", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        faiss.omp_set_num_threads(1)  # a new thread's OpenMP default is every core
        while True:
            with self._wake:
                while not self._due:
                    self._wake.wait()
                index = self._due.pop(next(iter(self._due)))
            with self._busy:
                started = time.thread_time_ns()
                try:
                    while index.fold(1):
                        pass
                except Exception:  # the index's next add past MAX_PENDING folds and raises it
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
    first): vectors added meanwhile stay pending unless an add passes ``MAX_PENDING``.
    What a fork does; a test uses it to search, snapshot or delete pending vectors."""
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
    """Have ``index``'s pending vectors inserted into its graph on the folding thread."""
    if index.pending:
        _FOLDER.schedule(index)
