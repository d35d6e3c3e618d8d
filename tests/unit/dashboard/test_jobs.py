"""Jobs: the registry every browser session shares, the smoothed time left, the scan job."""

from __future__ import annotations

import threading
from itertools import pairwise

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.conflicts.detector import ConflictDetector, Look
from memory_core.conflicts.guard import ConflictGuard
from memory_core.dashboard.activity import SharedActivity, ago
from memory_core.dashboard.background import Actor, BackgroundJob, EtaEstimator, JobState
from memory_core.dashboard.jobs import SCAN, JobBusyError, JobRegistry, ScanJob, job_caption
from memory_core.errors import AtlasError, InputError

ANA, BO = Actor("v-ana", "ana"), Actor("v-bo")


class Gate(BackgroundJob[str]):
    """Waits for ``release``; then returns, raises ``fail`` or stops when cancelled."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.release = threading.Event()
        self.fail = fail
        self._start("test-gate")

    def _run(self) -> str:
        while not self.release.wait(0.01):
            self.checkpoint()
        if self.fail is not None:
            raise self.fail
        self._progress = 1.0
        return "result"


def test_the_registry_shares_the_newest_job_of_a_kind_and_refuses_a_second_one() -> None:
    registry = JobRegistry()
    before = registry.version
    job = registry.start("ab", Gate, ANA)
    assert registry.latest("ab") is job and registry.running() == [job]
    assert registry.version != before and job.started_by == ANA
    with pytest.raises(JobBusyError, match="started by ana"):
        registry.start("ab", Gate, BO)
    assert registry.latest("ab") is job  # nothing replaced
    running = registry.version
    job.release.set()
    job.wait(5)
    assert registry.version != running  # an ended job moves the version too
    assert job.state is JobState.DONE and job.result == "result" and job.ended_at is not None
    again = registry.start("ab", Gate, BO)  # once it ended, anyone may start the next
    assert registry.latest("ab") is again
    again.cancel()
    again.wait(5)
    assert again.state is JobState.CANCELLED and again.result is None


def test_a_job_is_built_outside_the_registry_lock_and_its_kind_reserved_meanwhile() -> None:
    registry = JobRegistry()
    building, go = threading.Event(), threading.Event()
    started: list[Gate] = []

    def slow_factory() -> Gate:  # a scan job reads the atlas under its lock here
        building.set()
        go.wait(5)
        return Gate()

    worker = threading.Thread(
        target=lambda: started.append(registry.start("ab", slow_factory, ANA))
    )
    worker.start()
    assert building.wait(5)
    assert registry.latest("ab") is None and registry.running() == []  # not held up
    with pytest.raises(JobBusyError, match="starting"):
        registry.start("ab", Gate, BO)
    go.set()
    worker.join(5)
    (job,) = started
    assert registry.latest("ab") is job and job.started_by == ANA
    with pytest.raises(RuntimeError):  # a factory that fails frees the kind again
        registry.start("other", lambda: (_ for _ in ()).throw(RuntimeError("no")), BO)
    other = registry.start("other", Gate, BO)
    for gate in (job, other):
        gate.release.set()
        gate.wait(5)


@pytest.mark.parametrize(
    ("error", "shown"),
    [(InputError("query", "too long"), "query: too long"), (KeyError("x"), "KeyError: 'x'")],
)
def test_any_error_ends_the_job_as_failed_so_run_comes_back(
    error: BaseException, shown: str
) -> None:
    job = Gate(fail=error)
    job.release.set()
    job.wait(5)
    assert not job.running and job.state is JobState.FAILED
    assert job.error is not None and shown in job.error and job.eta_seconds() is None


def test_the_caption_says_who_started_a_job_to_each_viewer() -> None:
    job = JobRegistry().start("ab", Gate, ANA)
    assert job_caption(job, "v-ana").startswith("Started by you;")
    assert job_caption(job, "v-other").startswith("Started by ana;")
    job.cancel()
    job.wait(5)
    assert job_caption(job, "v-other") == "Started by ana; cancelled."
    assert BO.seen_by("v-ana") == "another browser session"


def shown_left(steps: list[float], every: float = 2.0) -> list[float]:
    eta, done, t, shown = EtaEstimator(), 0.0, 0.0, []
    eta.update(0.0, 0.0)
    for step in steps:
        t += every
        done = min(done + step, 0.99)
        value = eta.update(done, t)
        if value is not None:
            shown.append(value)
    return shown


def rises(shown: list[float]) -> int:
    return sum(b > a + 1e-9 for a, b in pairwise(shown))


def test_time_left_is_smoothed_and_counts_down_instead_of_jumping() -> None:
    # uneven steps (slow and fast turns) at a mean of 0.55% a second
    shown = shown_left([0.002, 0.02, 0.01, 0.002, 0.02, 0.012] * 15)
    assert len(shown) > 80
    assert rises(shown) <= 1  # counts down; corrected at most once (it was 25 → 72 → 110 → 12)
    assert 150 < shown[0] < 400  # the pace, not the first step's luck


def test_a_fast_start_is_corrected_once_not_back_and_forth() -> None:
    # embedding first (10% in 2 s), then the slow replays
    shown = shown_left([0.10] + [0.002, 0.02, 0.01, 0.002, 0.02, 0.012] * 12)
    assert rises(shown) <= 2


def test_a_stall_shows_no_time_rather_than_a_wrong_one() -> None:
    eta = EtaEstimator()
    for t in range(10):
        eta.update(0.01 * t, 2.0 * t)
    assert eta.update(0.1, 20.0) is not None
    assert eta.update(0.1, 45.0) is None  # nothing finished for 25 s
    assert eta.update(0.2, 47.0) is not None  # the pace is back


def test_a_scan_names_a_failing_session_and_queues_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=HashingEmbedder(64), clock=ManualClock(1e9)
    )
    guard = ConflictGuard(atlas)
    atlas.add("The budget is 5000 euros.", session_id="good")
    atlas.add("The budget is now 6000 euros.", session_id="good")
    atlas.add("The hotel is in Lyon.", session_id="bad")
    real_screen = ConflictDetector.screen_stored

    def screen(detector: ConflictDetector, node_id: str) -> list[Look]:
        if atlas.get(node_id).session_id == "bad":
            raise AtlasError("the judge is unavailable")
        return real_screen(detector, node_id)

    monkeypatch.setattr(ConflictDetector, "screen_stored", screen)
    job = JobRegistry().start(SCAN, lambda: ScanJob(guard), ANA)
    job.wait(30)
    assert job.state is JobState.DONE and job.result == 1 and job.progress == 1.0
    assert job.failures == ["session bad: the judge is unavailable"]
    assert guard.queue.counts().open == 1


def test_a_pair_across_two_sessions_of_one_user_is_counted_once() -> None:
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=HashingEmbedder(64), clock=ManualClock(1e9)
    )
    guard = ConflictGuard(atlas)
    ana = {"user_id": "ana"}
    atlas.add("The budget is 5000 euros.", session_id="monday", metadata=ana)
    atlas.add("The budget is now 6000 euros.", session_id="friday", metadata=ana)
    job = JobRegistry().start(SCAN, lambda: ScanJob(guard), ANA)
    job.wait(30)
    assert guard.queue.counts().open == 1  # found from either session, queued once
    assert job.result == 1  # what the page says it queued is what the reviewer sees


def test_shared_activity_says_who_changed_what_and_when() -> None:
    now = [1000.0]
    activity = SharedActivity(clock=lambda: now[0])
    assert activity.describe("v-ana") == "No change by anyone yet."
    activity.record(BO, "pressed Play")
    now[0] += 12
    assert (
        activity.describe("v-ana") == "Last change: another browser session pressed Play · 12 s ago"
    )
    assert activity.describe("v-bo").startswith("Last change: you pressed Play")
    assert activity.count == 1 and ago(4000) == "1.1 h ago" and ago(125) == "2 min ago"
