"""BackgroundJob: runs at construction, stops at its next check after ``cancel``."""

from __future__ import annotations

import threading

from memory_core.dashboard.background import BackgroundJob


class Spinner(BackgroundJob):
    """Counts until cancelled; ``started`` lets the test wait for the thread."""

    def __init__(self) -> None:
        self.turns = 0
        self.started = threading.Event()
        self._start("test-spinner")

    def _run(self) -> None:
        self.started.set()
        while not self.cancelled():
            self.turns += 1
        self.stage = "stopped"


def test_a_job_runs_until_cancelled_and_then_ends() -> None:
    job = Spinner()
    assert job.started.wait(5) and job.running and not job.cancelled()
    job.cancel()
    job.wait(5)
    assert not job.running and job.cancelled()
    assert job.stage == "stopped" and job.error is None and job.turns > 0
