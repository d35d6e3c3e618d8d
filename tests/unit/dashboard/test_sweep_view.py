"""The tuning page's sweep: the background job, its outcome and its charts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import optuna
import pytest

from memory_core.dashboard.study_storage import ALLOW_ANY_ENV
from memory_core.dashboard.sweep_view import (
    SweepJob,
    SweepOutcome,
    SweepRequest,
    arm_values,
    default_study_name,
    importance_figure,
    importance_note,
    pareto_figure,
    public_url,
    trial_table,
)
from memory_core.dashboard.tuning import EDITABLE_FIELDS
from memory_core.engine.config import preset
from memory_core.errors import ConfigError, InputError, NotFoundError
from memory_core.harness.sweep import TrialRow

ROOT = Path(__file__).resolve().parents[3]
TRIP = ROOT / "sample_sessions" / "trip-approval.json"
PARAMS = ("decay_strategy", "decay_rate", "evict_threshold")


@pytest.fixture(autouse=True, scope="module")
def any_storage() -> Iterator[None]:
    """These tests keep their studies in temporary folders, outside the data folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ALLOW_ANY_ENV, "1")
        yield


def request(tmp: Path, **kw: object) -> SweepRequest:
    values: dict[str, object] = {
        "files": (TRIP,), "base_preset": "tuned", "params": PARAMS, "trials": 3,
        "capacity_fraction": 0.25, "top_k": 10, "storage": f"sqlite:///{tmp / 's.sqlite'}",
        "study_name": "unit", "embedder": "hashing",
    }  # fmt: skip
    values.update(kw)
    return SweepRequest(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> SweepOutcome:
    with pytest.MonkeyPatch.context() as patch:  # also when another module reuses this
        patch.setenv(ALLOW_ANY_ENV, "1")
        job = SweepJob(request(tmp_path_factory.mktemp("sweep"), trials=6))
    job.wait(120)
    assert job.error is None and job.stage == "done"
    assert job.done == 6 and job.progress == 1.0 and job.result is not None
    return job.result


def test_outcome_holds_every_trial_and_the_front(outcome: SweepOutcome) -> None:
    assert [t.number for t in outcome.trials] == list(range(6))
    assert outcome.pareto and set(outcome.pareto) <= {t.number for t in outcome.trials}
    assert outcome.conversations == ("trip-approval",) and outcome.params == PARAMS
    for t in outcome.trials:
        assert 0 <= t.recall_at_k <= 1 and t.memory_fraction > 0 and set(t.params) == set(PARAMS)
    # nothing on the front is dominated by another trial
    for n in outcome.pareto:
        p = outcome.trial(n)
        assert not any(
            t.recall_at_k >= p.recall_at_k
            and t.memory_fraction <= p.memory_fraction
            and (t.recall_at_k, t.memory_fraction) != (p.recall_at_k, p.memory_fraction)
            for t in outcome.trials
        )


def test_table_and_pareto_chart(outcome: SweepOutcome) -> None:
    table = trial_table(outcome)
    assert [r["trial"] for r in table if r["Pareto"]] == sorted(outcome.pareto)
    assert {"recall_at_k", "memory_fraction", "retention", *PARAMS} <= set(table[0])
    figure = pareto_figure(outcome)
    names = {t.name for t in figure.data if t.mode == "markers"}
    assert "Pareto front" in names
    front = next(t for t in figure.data if t.name == "Pareto front")
    assert len(front.x) == len(outcome.pareto)
    assert "decay_rate" in front.hovertemplate and "trial" in front.hovertemplate


def test_importances_or_a_reason(outcome: SweepOutcome) -> None:
    note = importance_note(outcome)
    if outcome.importances:
        assert note is None
        bars = importance_figure(outcome).data[0]
        assert set(bars.y) == set(outcome.importances)
    else:
        assert note is not None and "differs" in note
    one = dataclasses.replace(outcome, trials=outcome.trials[:1], importances={})
    assert "at least 2 finished trials" in (importance_note(one) or "")


def test_a_trial_fills_an_arm_and_exports(outcome: SweepOutcome) -> None:
    number = outcome.pareto[0]
    values = arm_values(outcome, number, EDITABLE_FIELDS)
    assert set(values) == set(EDITABLE_FIELDS)
    for name, value in outcome.trial(number).params.items():
        assert values[name] == value
    assert values["stability_hours"] == preset("tuned").stability_hours  # not searched
    assert f"decay_rate = {outcome.trial(number).params['decay_rate']}" in (
        outcome.config(number).to_toml()
    )
    with pytest.raises(NotFoundError):
        outcome.trial(99)


def dominated(row: TrialRow, rows: tuple[TrialRow, ...]) -> bool:
    return any(
        t.recall_at_k >= row.recall_at_k
        and t.memory_fraction <= row.memory_fraction
        and (t.recall_at_k, t.memory_fraction) != (row.recall_at_k, row.memory_fraction)
        for t in rows
    )


def test_partial_outcome_grows_trial_by_trial(tmp_path: Path) -> None:
    snapshots: list[SweepOutcome | None] = []

    class Recording(SweepJob):
        def _saw_study(self, study: optuna.Study) -> None:
            super()._saw_study(study)
            snapshots.append(self.partial)

    job = Recording(request(tmp_path, trials=3))
    job.wait(120)
    assert job.stage == "done" and job.result is not None
    assert [len(s.trials) for s in snapshots if s is not None] == [1, 2, 3]
    for snap in snapshots:
        assert snap is not None and snap.importances == {}  # importances only at the end
        # the front is recomputed from the rows so far: exactly their non-dominated trials
        assert {r.number for r in snap.trials if not dominated(r, snap.trials)} == set(snap.pareto)
        assert snap.best().recall_at_k == max(t.recall_at_k for t in snap.trials)
        assert len(pareto_figure(snap).data[0].x) > 0
    last = job.partial
    assert last is not None and last is snapshots[-1]
    assert last.trials == job.result.trials and last.pareto == job.result.pareto


def test_stop_ends_after_the_current_trial(tmp_path: Path) -> None:
    job = SweepJob(request(tmp_path, trials=50))
    job.cancel()
    job.wait(120)
    assert job.stage == "stopped" and job.result is not None
    assert 1 <= len(job.result.trials) < 50 and job.done == len(job.result.trials)


def test_failure_is_reported_not_raised(tmp_path: Path) -> None:
    job = SweepJob(request(tmp_path, storage="nosuchdriver://x"))
    job.wait(60)
    assert job.stage == "failed" and job.result is None
    assert job.error is not None and "storage" in job.error


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"files": ()}, "conversations"),
        ({"params": ()}, "params"),
        ({"trials": 0}, "trials"),
        ({"trials": 1001}, "trials"),
        ({"study_name": " "}, "study_name"),
        ({"storage": ""}, "storage"),
    ],
)
def test_bad_requests_name_the_field(tmp_path: Path, changes: dict, field: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InputError, match=field):
        request(tmp_path, **changes)


def test_unknown_base_preset(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="preset"):
        request(tmp_path, base_preset="nope")


def test_names_and_urls() -> None:
    assert (
        default_study_name(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "dashboard-20260102-030405"
    )
    assert (
        public_url("postgresql+psycopg://me:secret@db/atlas")
        == "postgresql+psycopg://me:***@db/atlas"
    )
    assert public_url("not a url") == "'not a url'"
