"""The second look at a write's open pairs, on a worker thread: the add never waits for it.

The claim judge's first look (rules and pair model) is fast enough for every write; on
the pairs it leaves open its second look (the MiniLM cross-encoder) costs about 15 ms of
CPU a pair, more than a guarded add's whole p99 budget of 20 ms. So the guard acts at once
on what the first look is sure of and hands the open pairs to a :class:`SecondLook`,
which reads them in batches on its own thread and hands each final verdict back (the
guard resolves a confirmed contradiction by its policy, as it resolves the first look's).

What it promises:

- **the add never blocks**: ``submit`` only appends to a bounded queue; when the queue is
  full, the pairs that do not fit keep their first look's verdict at once (counted in
  ``overflowed``, logged), so a flood degrades to the fast judge, never to a lost pair
  (a pair whose first look was deferred too, ``detector.py``, has it taken then, on the
  caller: ``quick``);
- **nothing fails silently**: when the second look raises, the batch keeps its first
  look's verdicts (delivered as usual) and the error is kept in ``errors`` and logged;
  a failing delivery, or a deferred first look that fails too, is kept and logged the
  same way;
- **determinism on request**: ``settle`` waits until every pair submitted so far has been
  delivered (tests and pages call it instead of sleeping); ``close`` settles and makes
  later submissions run at once on the caller;
- **no idle thread**: the worker starts with the first pair and ends when the queue is
  empty; it is not a daemon, so a process that exits with pairs waiting delivers them
  first. It lowers its own scheduling priority (Linux), so on a busy box the writes it
  runs beside get the cores first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_core.conflicts.detector import Look
from memory_core.conflicts.verdict import Verdict
from memory_core.engine.validate import is_count
from memory_core.errors import ConfigError

CAPACITY = 1024
"""Open pairs waiting at most; more keep their first look (``SecondLook.overflowed``)."""
BATCH = 64
"""Open pairs read in one call of the second look at most (the cross-encoder sorts them
by length into its own batches of 32)."""
NICENESS = 10
"""How much the worker lowers its own priority (as ``nice -n 10``)."""
ERRORS_KEPT = 100
"""Failures remembered (the oldest forgotten first); every one is logged."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Pending:
    """An open pair of a write, waiting for its second look.

    Attributes:
        look: the stored memory, the pair's cosine and the first look.
        new_id: the memory the write stored.
        confidence: the write's confidence (the policy weighs it).
    """

    look: Look
    new_id: str
    confidence: float


SecondLookFn = Callable[[Sequence[Look]], list[Verdict]]
"""The final verdict of each look (``ConflictDetector.second_look``)."""
QuickFn = Callable[[Sequence[Look]], list[Verdict]]
"""The first look's verdict of each look, a deferred one's taken then
(``ConflictDetector.first_verdicts``)."""
Deliver = Callable[[list[tuple[Pending, Verdict]]], None]
"""Acts on each pending pair's final verdict (``ConflictGuard`` queues contradictions)."""


class SecondLook:
    """Runs the second look at open pairs off the caller's thread (see module doc).

    Args:
        look: the final verdict of each look, in one batch.
        deliver: called with each batch's pairs and verdicts, on the worker thread.
        quick: the verdict each pair keeps when its second look does not run (the queue
            is full, or ``look`` raised); default its first look's.
        capacity: open pairs waiting at most.
        batch: pairs per call of ``look``.
    """

    __slots__ = (
        "_batch",
        "_busy",
        "_capacity",
        "_closed",
        "_deliver",
        "_done",
        "_errors",
        "_look",
        "_overflowed",
        "_quick",
        "_thread",
        "_waiting",
    )

    def __init__(
        self,
        look: SecondLookFn,
        deliver: Deliver,
        *,
        quick: QuickFn | None = None,
        capacity: int = CAPACITY,
        batch: int = BATCH,
    ) -> None:
        for field, value in (("capacity", capacity), ("batch", batch)):
            if not is_count(value):
                raise ConfigError(field, value, "a positive integer")
        self._look = look
        self._deliver = deliver
        self._quick = quick or _first_verdicts
        self._capacity = capacity
        self._batch = batch
        self._waiting: deque[Pending] = deque()
        self._busy = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._done = threading.Condition()
        self._errors: deque[str] = deque(maxlen=ERRORS_KEPT)
        self._overflowed = 0

    @property
    def pending(self) -> int:
        """Pairs submitted and not yet delivered."""
        with self._done:
            return len(self._waiting) + self._busy

    @property
    def overflowed(self) -> int:
        """Pairs that found the queue full and kept their first look's verdict."""
        with self._done:
            return self._overflowed

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called: submissions run at once on the caller."""
        with self._done:
            return self._closed

    @property
    def errors(self) -> tuple[str, ...]:
        """What failed, most recent last (each one also logged)."""
        with self._done:
            return tuple(self._errors)

    def submit(self, pairs: Sequence[Pending]) -> None:
        """Queue ``pairs`` for their second look and return at once (see module doc)."""
        if not pairs:
            return
        with self._done:
            if self._closed:
                now = list(pairs)
                late: list[Pending] = []
            else:
                room = max(0, self._capacity - len(self._waiting) - self._busy)
                self._waiting.extend(pairs[:room])
                now, late = [], list(pairs[room:])
                self._overflowed += len(late)
                if self._waiting and self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="atlas-second-look", daemon=False
                    )
                    self._thread.start()
        if late:
            _log.warning("second-look queue full: %d pair(s) keep their first look", len(late))
            self._keep_first(late)
        if now:
            self._process(now)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every pair submitted so far was delivered; False when ``timeout``
        seconds passed first. Never call it while holding what ``deliver`` takes (the
        guard's atlas lock): the worker would wait for it."""
        with self._done:
            return self._done.wait_for(lambda: self._thread is None, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Settle, and run later submissions at once on the caller; True when settled."""
        with self._done:
            self._closed = True
        return self.settle(timeout)

    def _run(self) -> None:
        _lower_priority()
        while True:
            with self._done:
                if not self._waiting:
                    self._thread = None
                    self._done.notify_all()
                    return
                count = min(self._batch, len(self._waiting))
                batch = [self._waiting.popleft() for _ in range(count)]
                self._busy = count
            try:
                self._process(batch)
            finally:
                with self._done:
                    self._busy = 0

    def _process(self, batch: list[Pending]) -> None:
        try:
            verdicts = self._look([p.look for p in batch])
        except Exception as exc:  # a worker's boundary: kept, logged, first looks delivered
            self._fail(f"second look of {len(batch)} pair(s) failed, first looks kept", exc)
            self._keep_first(batch)
            return
        self._hand_over(list(zip(batch, verdicts, strict=True)))

    def _keep_first(self, pairs: list[Pending]) -> None:
        """Deliver ``pairs`` with their first look's verdicts (``quick``)."""
        try:
            verdicts = self._quick([p.look for p in pairs])
        except Exception as exc:  # a worker's boundary: kept and logged
            self._fail(f"first look of {len(pairs)} deferred pair(s) failed", exc)
            return
        self._hand_over(list(zip(pairs, verdicts, strict=True)))

    def _hand_over(self, results: list[tuple[Pending, Verdict]]) -> None:
        try:
            self._deliver(results)
        except Exception as exc:  # a worker's boundary: kept and logged
            self._fail(f"delivering {len(results)} second look(s) failed", exc)

    def _fail(self, what: str, exc: Exception) -> None:
        _log.error("%s: %r", what, exc, exc_info=exc)
        with self._done:
            self._errors.append(f"{what}: {exc!r}")


def _first_verdicts(looks: Sequence[Look]) -> list[Verdict]:
    return [look.first.verdict for look in looks]


def _lower_priority() -> None:
    """Lower the calling thread's scheduling priority, where the OS has per-thread nice."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
