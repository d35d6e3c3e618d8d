from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
import sqlalchemy

from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.replay import ReplaySettings
from memory_core.harness.sweep import (
    SEARCH_SPACE,
    best_config,
    importances,
    opened_study,
    rdb_storage,
    spec_for,
    suggest_config,
    sweep,
)

from .conftest import FILLER, conversation_data


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    for n in range(2):
        data = conversation_data(
            [
                [f"My locker number is {n}42, please remember it.", *FILLER],
                [*FILLER[::-1], f"Project codename {n} is Bluebird."],
            ],
            [
                (["s1-t1"], "what is my locker number", "recalled"),
                (["s2-t9"], "project codename", "recalled"),
            ],
            cid=f"conv{n}",
        )
        (tmp_path / f"c{n}.json").write_text(json.dumps(data), encoding="utf-8")
    return tmp_path


def spec(session_dir: Path, **kw):
    settings = ReplaySettings(capacity_fraction=0.3, trajectory_every=1000)
    return spec_for([session_dir], AtlasConfig(), settings, embedder="hashing", **kw)


def test_suggested_configs_are_valid_for_every_parameter() -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(30):
        trial = study.ask()
        config = suggest_config(trial, AtlasConfig(), list(SEARCH_SPACE))
        assert isinstance(config, AtlasConfig)
        assert set(trial.params) == set(SEARCH_SPACE)
        study.tell(trial, 0.0)


def test_in_memory_sweep_reports_pareto_front(session_dir: Path) -> None:
    result = sweep(spec(session_dir, seed=3), trials=4)
    assert result.trials == 4 and result.storage is None
    assert result.pareto
    recalls = [r.recall_at_k for r in result.pareto]
    assert recalls == sorted(recalls, reverse=True)
    for row in result.pareto:  # nobody on the front is dominated by another front member
        assert not any(
            o.recall_at_k >= row.recall_at_k
            and o.memory_fraction <= row.memory_fraction
            and (o.recall_at_k, o.memory_fraction) != (row.recall_at_k, row.memory_fraction)
            for o in result.pareto
        )
    assert {"retention", "mrr", "final_nodes"} <= set(result.pareto[0].metrics)
    best = best_config(result, AtlasConfig())
    assert best.decay_strategy == result.best().params["decay_strategy"]
    assert result.to_dict()["best"]["number"] == result.best().number


def test_sqlite_study_is_resumed(session_dir: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    sweep(spec(session_dir, params=("decay_rate",)), trials=2, storage=url, study_name="s")
    again = sweep(spec(session_dir, params=("decay_rate",)), trials=1, storage=url, study_name="s")
    assert again.trials == 3
    assert set(again.pareto[0].params) == {"decay_rate"}


def test_importances_need_variance() -> None:
    with opened_study(None, "x") as study:
        assert importances(study) == {}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"trials": 0}, "trials"),
        ({"trials": 1, "workers": 0}, "workers"),
        ({"trials": 2, "workers": 2}, "storage"),
    ],
)
def test_bad_sweep_arguments(session_dir: Path, kwargs: dict, field: str) -> None:
    with pytest.raises(InputError, match=field):
        sweep(spec(session_dir), **kwargs)


def test_unknown_search_parameter(session_dir: Path) -> None:
    with pytest.raises(InputError, match="sweepable"):
        spec(session_dir, params=("warp_factor",))


def test_bad_storage_url(session_dir: Path) -> None:
    with pytest.raises(InputError, match="storage"):
        sweep(spec(session_dir), trials=1, storage="nosuchdb://x")


class TablesCreatedByAnotherWorker:
    """A fake ``RDBStorage`` that loses the schema race once, as a worker does when another
    process creates Optuna's tables between SQLAlchemy's existence check and its CREATE."""

    calls = 0

    def __init__(self, url: str, engine_kwargs: dict) -> None:
        type(self).calls += 1
        if type(self).calls == 1:
            raise sqlalchemy.exc.OperationalError(
                "CREATE TABLE studies", {}, Exception("table studies already exists")
            )


def test_a_worker_that_loses_the_table_creation_race_joins_once_the_tables_exist(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(optuna.storages, "RDBStorage", TablesCreatedByAnotherWorker)
    storage = rdb_storage("sqlite:///shared.sqlite")
    assert isinstance(storage, TablesCreatedByAnotherWorker)
    assert TablesCreatedByAnotherWorker.calls == 2


def test_a_database_error_that_is_not_the_race_fails_at_once(tmp_path: Path) -> None:
    not_a_database = tmp_path / "notes.sqlite"
    not_a_database.write_text("plain text, not SQLite", encoding="utf-8")
    with pytest.raises(InputError, match="file is not a database"):
        rdb_storage(f"sqlite:///{not_a_database}", attempts=3)
