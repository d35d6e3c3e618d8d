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

A hand-off pays only while a second core is free. When the other core is taken (other
processes on a shared box), the helper waits for a core, or is switched out holding the
GIL, and the caller waits for it: at load 3-14 on two cores a retrieve's wall p50 was
1.4-3.5x the serial one's (docs/performance.md, session 15). So each hand-off is
scored (``_Payoff``): the helper's piece's CPU (work the caller was spared) against the
caller's stall (its wall time from the hand-off to the result less its own CPU in it).
While the recent balance is negative, calls run both pieces here, for a stretch that
doubles while the probe after it loses again. Either way the results are the same. The
balance is the helper's, whoever hands it work (a retrieve's BM25, a live turn's entity
recognizer, ``context/extract/parse.py``): each asks whether a core is free now.
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


MEMORY = 0.75
"""How much of the balance of earlier hand-offs each new one keeps (the rest decays)."""
FIRST_STRETCH = 16
"""Calls run serially after a losing balance, before the next hand-off probes again."""
LONGEST_STRETCH = 1024
"""The stretch doubles up to this while probes keep losing: on a box that stays busy, one
call in ~1,000 pays a probe's stall (so the p99 is the serial path's)."""


class _Payoff:
    """Whether handing a piece to the helper has paid lately: the decayed sum of each
    hand-off's CPU moved off the caller minus the caller's stall. A negative sum starts
    a stretch of serial calls; a hand-off that wins shortens the next stretch to the first.
    Used under the helper's ``_taken`` lock only."""

    __slots__ = ("balance_ns", "serial_left", "stretch")

    def __init__(self) -> None:
        self.balance_ns = 0.0
        self.serial_left = 0
        self.stretch = FIRST_STRETCH

    def hand_off(self) -> bool:
        """Whether this call hands its piece over (False during a serial stretch)."""
        if self.serial_left:
            self.serial_left -= 1
            return False
        return True

    def record(self, moved_ns: int, stalled_ns: int) -> None:
        """Count one hand-off: ``moved_ns`` of CPU the helper ran, ``stalled_ns`` the
        caller waited."""
        self.balance_ns = MEMORY * self.balance_ns + (moved_ns - stalled_ns)
        if self.balance_ns >= 0.0:
            self.stretch = FIRST_STRETCH
            return
        self.serial_left, self.balance_ns = self.stretch, 0.0
        self.stretch = min(2 * self.stretch, LONGEST_STRETCH)


class _Helper:
    """The process's one helper thread (an executor of one), whether it is taken, and
    whether handing it work has paid lately."""

    __slots__ = ("_executor", "_payoff", "_piece_ns", "_taken", "cpu_ns")

    def __init__(self) -> None:
        self._executor: futures.ThreadPoolExecutor | None = None
        self._taken = threading.Lock()
        self._payoff = _Payoff()
        self._piece_ns = 0
        """The last piece's CPU (written by the helper, read after its result)."""
        self.cpu_ns = 0
        """CPU time the helper thread has spent on pieces (written by it alone)."""

    def both(
        self, first: Callable[[], First], second: Callable[[], Second]
    ) -> tuple[First, Second]:
        if not self._taken.acquire(blocking=False):
            return first(), second()
        try:
            if not self._payoff.hand_off():
                return first(), second()
            if self._executor is None:
                self._executor = futures.ThreadPoolExecutor(
                    max_workers=1,
                    thread_name_prefix="atlas-overlap",
                    initializer=faiss.omp_set_num_threads,  # a new thread's OpenMP default
                    initargs=(1,),
                )
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            pending = self._executor.submit(self._timed, first)
            try:
                own = second()
            except BaseException:
                if not pending.cancel():
                    futures.wait((pending,))
                raise
            if pending.cancel():  # not started yet (no core was free): do it here
                self._payoff.record(0, _stalled(wall, cpu))
                return first(), own
            out = pending.result()
            self._payoff.record(self._piece_ns, _stalled(wall, cpu))
            return out, own
        finally:
            self._taken.release()

    def _timed(self, piece: Callable[[], First]) -> First:
        started = time.thread_time_ns()
        try:
            return piece()
        finally:
            self._piece_ns = time.thread_time_ns() - started
            self.cpu_ns += self._piece_ns

    def forget(self) -> None:
        """In a forked child: the parent's thread does not exist here (nor its history)."""
        self._executor, self._taken, self._payoff = None, threading.Lock(), _Payoff()


def _stalled(wall: int, cpu: int) -> int:
    """Nanoseconds since ``wall`` (``perf_counter_ns``) this thread did not run: the wall
    time less this thread's CPU since ``cpu`` (``thread_time_ns``)."""
    return (time.perf_counter_ns() - wall) - (time.thread_time_ns() - cpu)


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
