"""Two independent pieces of work at once: one on a helper thread, one on the caller's.

A retrieval in a large atlas runs two searches that share nothing: the vector index's
(FAISS, which releases the GIL while it searches) and BM25's (numpy, which releases it
in its larger array operations). On two cores they overlap, so the call costs about the
longer of the two instead of their sum.

One helper thread serves the whole process, created on first use and kept: starting a
thread per call would cost more than it saves. It runs one piece of work at a time; a
caller that finds it busy (another atlas retrieving in another thread) does both pieces
itself rather than queue behind it, and a piece the helper has not started by the time
the caller is done with its own (the other core was busy) is taken back and run by the
caller: on a loaded machine the call costs about the sum again, not the sum plus the
wait for a core. The caller always waits for the helper's piece to finish, even when its
own piece raises, so the helper never reads an index after the caller has let go of the
lock that keeps writers out. On one core nothing overlaps and both pieces run in turn on
the caller's thread. A forked child starts a helper of its own (the parent's thread does
not exist there).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent import futures
from typing import TypeVar

import faiss

First = TypeVar("First")
Second = TypeVar("Second")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity call on this platform
        return os.cpu_count() or 1


class _Helper:
    """The process's one helper thread (an executor of one), and whether it is taken."""

    __slots__ = ("_executor", "_taken", "cpu_ns")

    def __init__(self) -> None:
        self._executor: futures.ThreadPoolExecutor | None = None
        self._taken = threading.Lock()
        self.cpu_ns = 0
        """CPU time the helper thread has spent on pieces (written by it alone)."""

    def both(
        self, first: Callable[[], First], second: Callable[[], Second]
    ) -> tuple[First, Second]:
        if not self._taken.acquire(blocking=False):
            return first(), second()
        try:
            if self._executor is None:
                self._executor = futures.ThreadPoolExecutor(
                    max_workers=1,
                    thread_name_prefix="atlas-overlap",
                    initializer=faiss.omp_set_num_threads,  # a new thread's OpenMP default
                    initargs=(1,),
                )
            pending = self._executor.submit(self._timed, first)
            try:
                own = second()
            except BaseException:
                if not pending.cancel():
                    futures.wait((pending,))
                raise
            if pending.cancel():  # not started yet (no core was free): do it here
                return first(), own
            return pending.result(), own
        finally:
            self._taken.release()

    def _timed(self, piece: Callable[[], First]) -> First:
        started = time.thread_time_ns()
        try:
            return piece()
        finally:
            self.cpu_ns += time.thread_time_ns() - started

    def forget(self) -> None:
        """In a forked child: the parent's thread does not exist here."""
        self._executor, self._taken = None, threading.Lock()


_HELPER: _Helper | None = _Helper() if _cores() > 1 else None
if _HELPER is not None:
    os.register_at_fork(after_in_child=_HELPER.forget)


def both(
    first: Callable[[], First], second: Callable[[], Second], *, overlap: bool = True
) -> tuple[First, Second]:
    """(``first()``, ``second()``): ``first`` on the helper thread while ``second`` runs
    here when ``overlap`` is asked for, the machine has more than one core and the helper
    is free; otherwise one after the other here. The two must not depend on each other
    nor mutate what the other reads."""
    if _HELPER is None or not overlap:
        return first(), second()
    return _HELPER.both(first, second)


def helper_cpu_ns() -> int:
    """CPU time the helper thread has spent on pieces of work since the process started
    (0 without a helper): a benchmark timing a call by its own thread's CPU adds the
    change in this, so work handed to the helper is not lost from the count."""
    return 0 if _HELPER is None else _HELPER.cpu_ns
