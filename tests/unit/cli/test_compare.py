"""``atlas compare``: paired output in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.cli import main

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
SHORT = str(SAMPLES / "sensitive-eta-application.json")


def test_json_compares_two_arms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.toml"
    a.write_text("[atlas]\nmax_nodes = 4\n", encoding="utf-8")
    code = main(
        [
            "compare",
            SHORT,
            "--a",
            str(a),
            "--b",
            "tuned",
            "--a-policy",
            "fifo",
            "--embedder",
            "hashing",
            "--resamples",
            "200",
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["a"].startswith("fifo") and out["b"] == "tuned"
    metrics = {d["metric"]: d for d in out["diffs"]}
    assert {"recall_at_k", "retention", "mrr"} <= set(metrics)
    r = metrics["recall_at_k"]
    assert r["ci_low"] <= r["diff"] <= r["ci_high"] and 0 <= r["p_value"] <= 1
    assert out["conversations_a"][0]["max_nodes"] == 4


def test_text_output_lists_swings(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "compare",
                SHORT,
                "--a",
                "seed-linear",
                "--b",
                "seed-linear",
                "--a-policy",
                "fifo",
                "--b-policy",
                "unlimited",
                "--set",
                "max_nodes=3",
                "--embedder",
                "hashing",
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "recall_at_k" in out and "exact McNemar" in out and "B right, A wrong" in out


def test_missing_params_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["compare", SHORT, "--a", "nope.toml", "--b", "tuned", "--embedder", "hashing"]) == 2
    )
    assert "params" in capsys.readouterr().err
