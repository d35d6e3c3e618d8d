"""The server's long jobs, by kind: one registry shared by every browser session.

A page never keeps a job in its own session state: it asks the registry for the newest
job of its kind, so a reload or a second viewer re-attaches to a running job and shows
a finished one's result (with who started it). One job of a kind runs at a time — the
machine has few cores, and a second A/B run would halve both — and starting another
while one runs is refused with who started it and how far it is. ``version`` changes
whenever a job starts or ends, so a page can tell in one read that it must redraw.

``ScanJob`` is the conflict review page's scan: one session at a time, so a session
that fails is named and the others' contradictions are still queued.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memory_core.conflicts.guard import ConflictGuard, GuardScan
from memory_core.dashboard.background import Actor, BackgroundJob, JobState
from memory_core.errors import AtlasError, InputError

JobT = TypeVar("JobT", bound=BackgroundJob[Any])

AB_RUN, SWEEP, SCAN = "ab-run", "sweep", "conflict-scan"
KIND_LABELS = {AB_RUN: "A/B run", SWEEP: "sweep", SCAN: "conflict scan"}


class JobBusyError(InputError):
    """A job of the same kind is running: start again once it ended (or stop it)."""


class JobRegistry:
    """The newest job of each kind, for the whole server process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, BackgroundJob[Any]] = {}
        self._building: set[str] = set()
        """Kinds whose job is being built: reserved, so a second start is refused."""
        self._starts = 0

    def start(self, kind: str, factory: Callable[[], JobT], actor: Actor) -> JobT:
        """Start ``factory()`` as the newest ``kind`` job, as ``actor``.

        The job is built outside the registry's lock (a scan job reads the atlas under
        the atlas lock): a page asking for any job meanwhile is not held up by it.

        Raises:
            JobBusyError: a ``kind`` job is still running or starting; nothing is started.
        """
        with self._lock:
            current = self._jobs.get(kind)
            if kind in self._building:
                raise JobBusyError(KIND_LABELS.get(kind, kind), "one is starting; wait for it")
            if current is not None and current.running:
                raise JobBusyError(
                    KIND_LABELS.get(kind, kind),
                    f"one is running, started by {current.started_by.name or 'a browser session'} "
                    f"({current.progress:.0%}); wait for it or stop it",
                )
            self._building.add(kind)
        try:
            job = factory()
        except BaseException:
            with self._lock:
                self._building.discard(kind)
            raise
        job.started_by = actor
        with self._lock:
            self._building.discard(kind)
            self._jobs[kind] = job
            self._starts += 1
        return job

    def latest(self, kind: str) -> BackgroundJob[Any] | None:
        with self._lock:
            return self._jobs.get(kind)

    def running(self) -> list[BackgroundJob[Any]]:
        with self._lock:
            return [job for job in self._jobs.values() if job.running]

    @property
    def version(self) -> tuple[int, int]:
        """Changes when a job starts or ends (starts so far, jobs ended among the newest)."""
        with self._lock:
            return self._starts, sum(not job.running for job in self._jobs.values())


def job_caption(job: BackgroundJob[Any], viewer: str) -> str:
    """Who started ``job`` and what became of it, for every viewer of the page."""
    who = job.started_by.seen_by(viewer)
    state = job.state
    if state is JobState.RUNNING:
        return f"Started by {who}; every browser on this server sees its progress."
    failed = f", {len(job.failures)} failed" if job.failures else ""
    return f"Started by {who}; {state.value}{failed}."


class ScanJob(BackgroundJob[int]):
    """Queues every contradiction among the active memories, one session at a time.

    The result is how many items the scan queued, each counted once: a pair across two
    sessions of one user is found from both, and the queue keeps one item for it (the
    page's "queued N" must match the items a reviewer then sees). A session whose scan
    failed is named in ``failures`` with the error, the other sessions are still scanned.
    """

    def __init__(self, guard: ConflictGuard, sessions: Sequence[str] | None = None) -> None:
        self.guard = guard
        self.sessions = tuple(sorted(guard.atlas.sessions()) if sessions is None else sessions)
        self._queued: set[str] = set()
        self._start("atlas-conflict-scan")

    @property
    def queued(self) -> int:
        return len(self._queued)

    def _run(self) -> int:
        total = len(self.sessions)
        scan = GuardScan(self.guard)  # a turn's untyped findings counted over all sessions
        for i, session_id in enumerate(self.sessions):
            self.checkpoint()
            self.stage = f"scanning session {session_id} ({i + 1} of {total})"
            try:
                self._queued.update(item.id for item in scan.session(session_id))
            except AtlasError as exc:
                self.failures.append(f"session {session_id}: {exc}")
            self._progress = (i + 1) / total
        self._queued.update(item.id for item in scan.finish())
        if total and len(self.failures) == total:
            self.error = "every session failed: " + "; ".join(self.failures)
        self._progress = 1.0
        return self.queued
