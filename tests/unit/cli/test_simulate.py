"""``atlas simulate``: table and JSON output, overrides, policies, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.cli import main

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
SHORT = str(SAMPLES / "sensitive-eta-application.json")


def test_json_has_summary_and_conversations(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "simulate",
            SHORT,
            "--embedder",
            "hashing",
            "--json",
            "--set",
            "max_nodes=8",
            "--policy",
            "fifo",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["summary"]) >= {
        "recall_at_k",
        "retention",
        "mrr",
        "forgetting_precision",
        "final_nodes",
    }
    (conv,) = out["conversations"]
    assert conv["conversation_id"] == "sensitive-eta-application"
    assert conv["max_nodes"] == 8 and conv["final_nodes"] == 8
    assert out["config"]["max_nodes"] == 8 and out["policy"] == "fifo"
    assert "trajectory" not in conv["facts"][0]


def test_params_file_and_trajectories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "p.toml"
    params.write_text('[atlas]\npreset = "seed-linear"\nmax_nodes = 12\n', encoding="utf-8")
    assert (
        main(
            [
                "simulate",
                SHORT,
                "--embedder",
                "hashing",
                "--json",
                "--params",
                str(params),
                "--trajectories",
                "--top-k",
                "3",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["decay_strategy"] == "linear" and out["config"]["max_nodes"] == 12
    conv = out["conversations"][0]
    assert conv["top_k"] == 3 and len(conv["facts"][0]["trajectory"]) == conv["turns"]


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "simulate",
                SHORT,
                "--embedder",
                "hashing",
                "--capacity-fraction",
                "0.5",
                "--policy",
                "lru",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "sensitive-eta-application" in out and "recall@10" in out and "capacity" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "max_nodes=-3"], "max_nodes"),
        (["--set", "warp=1"], "unknown field"),
        (["--capacity-fraction", "2"], "capacity_fraction"),
    ],
)
def test_bad_values_exit_2_naming_the_field(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", SHORT, "--embedder", "hashing", *argv]) == 2
    assert message in capsys.readouterr().err


def test_invalid_session_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["simulate", str(bad), "--embedder", "hashing"]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_every_params_file_loads_and_tuned_is_the_default() -> None:
    from memory_core.engine.config import AtlasConfig

    files = sorted((SAMPLES.parent / "params").glob("*.toml"))
    assert {f.stem for f in files} >= {"tuned", "seed-linear"}
    for path in files:
        AtlasConfig.from_toml(path)
    assert AtlasConfig.from_toml(SAMPLES.parent / "params" / "tuned.toml") == AtlasConfig()
