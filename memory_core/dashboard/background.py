"""Long dashboard work (replays, sweeps) in a cancellable daemon thread that pages poll."""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

ResultT = TypeVar("ResultT")


class BackgroundJob(Generic[ResultT]):
    """Runs ``_run`` in a daemon thread so the page stays responsive and Stop works.

    Subclasses set their own fields, then call ``_start``; ``_run`` reports through
    ``stage``/``error``, sets ``result`` when done and checks ``cancelled`` at its own
    safe points.
    """

    stage: str
    error: str | None
    result: ResultT | None

    def _start(self, name: str) -> None:
        self.stage = "starting"
        self.error = None
        self.result = None
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        raise NotImplementedError


def eta_seconds(progress: float, elapsed: float) -> float | None:
    """Seconds left at the pace so far; None until there is a pace to go by."""
    if progress <= 0.02 or elapsed < 1.0:
        return None
    return elapsed * (1.0 - min(progress, 1.0)) / progress
