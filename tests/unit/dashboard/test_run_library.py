"""Saving A/B runs and sweeps to the runs table and reopening them without re-running."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_core.dashboard.run_library import (
    KIND_AB,
    SavedRunError,
    reopen,
    save_ab,
    save_sweep,
    saved_runs,
)
from memory_core.dashboard.sweep_view import SweepOutcome
from memory_core.dashboard.tuning import ABRun, diff_rows, missed_rows, trajectory_rows
from memory_core.store.engine import open_database
from memory_core.store.memory import MemoryStore
from memory_core.store.records import RunRecord
from memory_core.store.repositories import RunRepository

from .test_sweep_view import outcome  # noqa: F401 - fixture reuse
from .test_tuning import run  # noqa: F401 - fixture reuse


@pytest.fixture(params=["memory", "sqlite"])
def runs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunRepository]:
    if request.param == "memory":
        yield MemoryStore().runs
        return
    db = open_database(f"sqlite:///{tmp_path / 'runs.db'}")
    yield db.runs
    db.close()


def test_ab_run_reopens_to_the_same_tables_and_charts(
    runs: RunRepository,
    run: ABRun,  # noqa: F811
) -> None:
    record = save_ab(runs, "seed vs tuned", run)
    again = reopen(runs.get(record.id))
    assert isinstance(again, ABRun)
    assert diff_rows(again.comparison) == diff_rows(run.comparison)
    assert again.comparison.a_only == run.comparison.a_only
    assert again.comparison.b_only == run.comparison.b_only
    for arm in ("A", "B"):
        assert missed_rows(again, arm) == missed_rows(run, arm)
    facts = [f.fact_id for f in run.comparison.results_a[0].facts]
    assert trajectory_rows(again, "trip-approval", facts) == trajectory_rows(
        run, "trip-approval", facts
    )
    assert (again.config_a, again.config_b) == (run.config_a, run.config_b)
    assert record.metrics["summary_b"]["recall_at_k"] == pytest.approx(
        run.comparison.diffs[0].mean_b
    )


def test_sweep_reopens_with_every_trial(
    runs: RunRepository,
    outcome: SweepOutcome,  # noqa: F811
) -> None:
    record = save_sweep(runs, "trip sweep", outcome)
    assert reopen(runs.get(record.id)) == outcome


def test_selector_lists_only_tuning_runs_newest_first(
    runs: RunRepository,
    run: ABRun,  # noqa: F811
    outcome: SweepOutcome,  # noqa: F811
) -> None:
    runs.add(name="cli run", policy="atlas", params={}, metrics={})
    first = save_ab(runs, "first", run)
    second = save_sweep(runs, "second", outcome)
    listed = saved_runs(runs)
    assert list(listed) == [second.id, first.id]
    assert listed[second.id].startswith("second · sweep · ")


def corrupt(record: RunRecord, **changes: Any) -> RunRecord:
    return dataclasses.replace(record, **changes)


def test_damaged_payloads_raise_a_clear_error_and_lose_nothing(
    runs: RunRepository,
    run: ABRun,  # noqa: F811
    outcome: SweepOutcome,  # noqa: F811
) -> None:
    ab = save_ab(runs, "ab", run)
    sweep = save_sweep(runs, "sw", outcome)
    conv = ab.conversations[0]
    bad_fact = {**conv, "facts": [{"fact_id": "x"}]}
    cases = [
        (corrupt(ab, params={**ab.params, "format": "v0"}), "params.format"),
        (corrupt(ab, policy="atlas"), "policy"),
        (corrupt(ab, conversations=[{**conv, "arm": "C"}]), r"conversations\[0\].arm"),
        (corrupt(ab, conversations=["nope"]), r"conversations\[0\]: expected dict"),
        (corrupt(ab, conversations=[bad_fact]), "missing 'fact'"),
        (corrupt(ab, params={**ab.params, "config_a": {"decay_rate": -1}}), "decay_rate"),
        (corrupt(ab, conversations=ab.conversations[:1]), "unreadable payload|results_b"),
        (corrupt(sweep, metrics={**sweep.metrics, "trials": None}), "metrics.trials"),
        (corrupt(sweep, metrics={**sweep.metrics, "pareto": [999]}), "metrics.pareto"),
    ]
    for record, problem in cases:
        with pytest.raises(SavedRunError, match=f"saved run '(ab|sw)'.*({problem})"):
            reopen(record)
    assert reopen(runs.get(ab.id)) is not None and runs.get(sweep.id) == sweep
    assert runs.get(ab.id).policy == KIND_AB
