"""Several worker processes join one Optuna study through a shared RDB storage.

Parametrised over SQLite (a file) and PostgreSQL (the suite's throwaway server), the two
storages a team would use. The hashing embedder keeps the replays fast: what is under
test is the sharing, not the recall.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

from memory_core.engine.config import AtlasConfig
from memory_core.harness.replay import ReplaySettings
from memory_core.harness.sweep import opened_study, spec_for, sweep

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SHORT = str(ROOT / "sample_sessions" / "sensitive-eta-application.json")


def test_two_worker_processes_share_one_study(db_url: str) -> None:
    spec = spec_for(
        [SHORT],
        AtlasConfig(),
        ReplaySettings(capacity_fraction=0.25, trajectory_every=1000),
        embedder="hashing",
        params=("decay_rate", "evict_threshold"),
    )
    seen: list[int] = []
    result = sweep(
        spec, trials=4, storage=db_url, study_name="shared", workers=2, on_trial=seen.append
    )
    assert result.trials == 4
    with opened_study(db_url, "shared", create=False) as study:
        numbers = sorted(t.number for t in study.trials)
        assert numbers == [0, 1, 2, 3]
        assert len({t.params["decay_rate"] for t in study.trials}) == 4  # sampled apart
    assert result.pareto and result.pareto[0].number in numbers


def test_independent_cli_processes_join_the_same_study(db_url: str, tmp_path: Path) -> None:
    """What two machines do: each runs ``atlas sweep`` against the same URL and name."""
    env = {**os.environ, "ATLAS_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "memory_core.cli",
        "sweep",
        SHORT,
        "--trials",
        "2",
        "--embedder",
        "hashing",
        "--storage",
        db_url,
        "--study",
        "team",
        "--search",
        "decay_rate,working_memory_size",
        "--json",
    ]
    procs = [
        subprocess.Popen(
            [*command, "--seed", str(seed)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    with opened_study(db_url, "team", create=False) as study:
        done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(done) == 4
