"""``atlas sweep``: a short in-memory study, JSON output and TOML export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.engine.config import AtlasConfig

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
SHORT = str(SAMPLES / "sensitive-eta-application.json")


def test_sweep_json_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    best = tmp_path / "best.toml"
    code = main(
        [
            "sweep",
            SHORT,
            "--trials",
            "2",
            "--embedder",
            "hashing",
            "--json",
            "--search",
            "decay_rate,decay_strategy",
            "--set",
            "max_nodes=10",
            "--export-best",
            str(best),
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["trials"] == 2 and out["pareto"]
    assert set(out["best"]["params"]) == {"decay_rate", "decay_strategy"}
    exported = AtlasConfig.from_toml(best)
    assert exported.max_nodes == 10
    assert exported.decay_rate == pytest.approx(out["best"]["params"]["decay_rate"])


def test_sweep_text_output_with_storage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    assert (
        main(
            [
                "sweep",
                SHORT,
                "--trials",
                "2",
                "--embedder",
                "hashing",
                "--storage",
                url,
                "--study",
                "cli",
                "--search",
                "evict_threshold",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "study 'cli': 2 finished trials" in out and "Pareto front" in out


def test_unknown_search_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", SHORT, "--trials", "1", "--embedder", "hashing", "--search", "nope"]) == 2
    assert "sweepable" in capsys.readouterr().err
