"""Long dashboard work (replays, sweeps, scans) in a cancellable daemon thread that pages poll.

A job always ends in one of three states — done, failed or cancelled — whatever its work
raises, so the page's Run button comes back at once (an unexpected exception is a
failure with its type named, not a thread that dies with the buttons still disabled).
Work that runs over several conversations or sessions reports each unit that failed in
``failures`` and keeps the others' results. Time left comes from ``EtaEstimator``: a
smoothed rate of completed work, counting down between updates instead of jumping.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from memory_core.errors import AtlasError

ResultT = TypeVar("ResultT")


class JobState(StrEnum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Actor:
    """Who did something to shared state: a browser session and the name it goes by."""

    viewer: str
    """A random id per browser session (kept in its session state)."""
    name: str | None = None
    """The signed-in or typed reviewer name; None for an anonymous session."""

    def seen_by(self, viewer: str) -> str:
        """How ``viewer`` is told who it was: "you", the name, or "another browser session"."""
        if viewer == self.viewer:
            return "you"
        return self.name or "another browser session"


class JobCancelled(Exception):
    """Raised inside a job's work at a safe point after ``cancel``."""


class EtaEstimator:
    """Seconds left from the rate of work completed over a sliding window.

    The window is the later half of the time so far (at least ``window`` seconds), so a
    fast start (embedding before the slow replays) drops out of it, and uneven steps
    average out. Samples are taken at most every ``min_interval`` seconds, so many
    viewers reading it do not make it noisier. The shown value counts down in real time
    and only follows a new estimate downwards, except when the work fell far behind the
    countdown: then it is re-anchored once, with headroom, instead of sitting at zero.
    """

    __slots__ = ("_at", "_min_interval", "_samples", "_shown", "_window")

    WARM_UP = 3
    """Samples before a time is shown (the first step is mostly luck)."""
    FOLLOW = 0.3
    """Share of the way the countdown moves towards a lower estimate (damps noise)."""
    HEADROOM = 1.25
    """A re-anchored countdown starts this much above the estimate, so one slow stretch
    does not make it rise again and again."""

    def __init__(self, *, window: float = 10.0, min_interval: float = 0.5) -> None:
        self._window = window
        self._min_interval = min_interval
        self._samples: list[tuple[float, float]] = []  # (time, work done), oldest first
        self._shown: float | None = None
        self._at = 0.0

    def update(self, done: float, now: float) -> float | None:
        """Seconds left with ``done`` (0..1) of the work completed at ``now``; None until
        there is a rate to go by."""
        done = min(max(done, 0.0), 1.0)
        samples = self._samples
        if not samples or now - samples[-1][0] >= self._min_interval:
            samples.append((now, done))
        if len(samples) <= self.WARM_UP:
            return None
        span = max(self._window, 0.5 * (now - samples[0][0]))
        then, before = next(s for s in samples if s[0] >= now - span)
        if now <= then or done <= before:  # nothing finished within the window: no pace
            self._shown = None
            return None
        estimate = (1.0 - done) * (now - then) / (done - before)
        if self._shown is not None:
            counted = self._shown - (now - self._at)
            if counted >= 0.5 * estimate:  # follow a lower estimate part of the way only
                estimate = counted - self.FOLLOW * max(0.0, counted - estimate)
            else:  # the work fell far behind the countdown: re-anchor once, with headroom
                estimate *= self.HEADROOM
        self._shown, self._at = max(estimate, 0.0), now
        return self._shown


class BackgroundJob(Generic[ResultT]):
    """Runs ``_run`` in a daemon thread so the page stays responsive and Stop works.

    Subclasses set their own fields, then call ``_start``; ``_run`` reports through
    ``stage``/``progress``/``failures``, returns the result, and calls ``checkpoint`` at
    its safe points (it raises ``JobCancelled`` after ``cancel``).
    """

    stage: str
    error: str | None
    result: ResultT | None
    _progress: float = 0.0

    def _start(self, name: str, actor: Actor | None = None) -> None:
        self.id = uuid.uuid4().hex[:8]
        self.started_by = actor or Actor("")
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.stage = "starting"
        self.error = None
        self.result = None
        self.failures: list[str] = []
        self._eta = EtaEstimator()
        self._eta_lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    @property
    def progress(self) -> float:
        return self._progress

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def state(self) -> JobState:
        if self.running:
            return JobState.RUNNING
        if self.error is not None:
            return JobState.FAILED
        return JobState.CANCELLED if self.cancelled() else JobState.DONE

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    def checkpoint(self) -> None:
        if self._cancel.is_set():
            raise JobCancelled

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def eta_seconds(self) -> float | None:
        """Smoothed seconds left (None before there is a pace, or once it ended)."""
        if not self.running:
            return None
        with self._eta_lock:
            return self._eta.update(self.progress, time.monotonic())

    def _main(self) -> None:
        try:
            result = self._run()
            if result is not None:
                self.result = result
            if self.error is None:
                self.stage = "stopped" if self.cancelled() else "done"
        except JobCancelled:
            self.stage = "cancelled"
        except AtlasError as exc:
            self.error, self.stage = str(exc), "failed"
        except Exception as exc:  # a bug must still end the job, or Run stays disabled
            self.error, self.stage = f"{type(exc).__name__}: {exc}", "failed"
        finally:
            self.ended_at = time.time()

    def _run(self) -> ResultT | None:
        raise NotImplementedError
