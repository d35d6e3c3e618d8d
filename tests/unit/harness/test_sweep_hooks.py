"""The sweep's hooks for callers that drive it from a UI: stop after a trial, list trials."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest

from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.replay import ReplaySettings
from memory_core.harness.sweep import opened_study, pareto_front, spec_for, sweep, trial_rows

from .conftest import FILLER, conversation_data


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    data = conversation_data(
        [["My locker number is 742, please remember it.", *FILLER]],
        [(["s1-t1"], "what is my locker number", "recalled")],
        cid="conv",
    )
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def spec(path: Path):  # type: ignore[no-untyped-def]
    return spec_for(
        [path], AtlasConfig(), ReplaySettings(capacity_fraction=0.5), embedder="hashing",
        params=("decay_rate", "evict_threshold"),
    )  # fmt: skip


def test_should_stop_ends_the_sweep_after_the_current_trial(session_file: Path) -> None:
    asked: list[int] = []
    result = sweep(
        spec(session_file),
        trials=10,
        on_trial=asked.append,
        should_stop=lambda: len(asked) >= 2,
    )
    assert asked == [1, 2] and result.trials == 2


def test_should_stop_needs_a_single_process(session_file: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="should_stop"):
        sweep(
            spec(session_file), trials=2, workers=2,
            storage=f"sqlite:///{tmp_path / 's.sqlite'}", should_stop=lambda: False,
        )  # fmt: skip


def test_trial_rows_list_every_finished_trial_and_contain_the_front(
    session_file: Path, tmp_path: Path
) -> None:
    storage = f"sqlite:///{tmp_path / 's.sqlite'}"
    result = sweep(spec(session_file), trials=4, storage=storage, study_name="ui")
    with opened_study(storage, "ui", create=False) as study:
        rows = trial_rows(study)
    assert [r.number for r in rows] == [0, 1, 2, 3]
    assert {r.number for r in result.pareto} <= {r.number for r in rows}
    by_number = {r.number: r for r in rows}
    for front in result.pareto:
        assert by_number[front.number] == front


def test_on_study_sees_the_rows_and_front_grow_trial_by_trial(session_file: Path) -> None:
    seen: list[tuple[list[int], set[int]]] = []

    def record(study: optuna.Study) -> None:
        seen.append(
            ([r.number for r in trial_rows(study)], {r.number for r in pareto_front(study)})
        )

    result = sweep(spec(session_file), trials=3, on_study=record)
    assert [rows for rows, _ in seen] == [[0], [0, 1], [0, 1, 2]]
    assert all(front and front <= set(rows) for rows, front in seen)
    assert seen[-1][1] == {r.number for r in result.pareto}


def test_on_study_needs_a_single_process(session_file: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="on_study"):
        sweep(
            spec(session_file), trials=2, workers=2,
            storage=f"sqlite:///{tmp_path / 's.sqlite'}", on_study=lambda _s: None,
        )  # fmt: skip
