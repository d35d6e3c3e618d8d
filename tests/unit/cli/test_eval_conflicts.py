"""``atlas eval-conflicts``: human table, JSON summary, judge options and error paths."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from memory_core.cli import main

HOLDOUT = Path(__file__).resolve().parents[2] / "data" / "conflict_pairs_holdout.jsonl"


@pytest.fixture
def small_set(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"a": "I like sushi.", "b": "I don't like sushi.", "label": "contradiction"},
        {"a": "The budget is 5000.", "b": "The budget is now 6000.", "label": "contradiction"},
        {"a": "I like tea.", "b": "I also like coffee.", "label": "compatible"},
        {"a": "I like tea.", "b": "The server runs Ubuntu.", "label": "contradiction"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_human_table(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval-conflicts", str(small_set)]) == 0
    out = capsys.readouterr().out
    assert "judge claims: 4 pairs" in out
    assert "precision 1.000  recall 0.667  f1 0.800  accuracy 0.750" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[4:7]}
    assert rows == {
        "contradiction": ["2", "0", "1"],
        "compatible": ["0", "1", "0"],
        "unrelated": ["0", "0", "0"],
    }
    assert "mistake" not in out


def test_human_table_lists_mistakes_on_request(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval-conflicts", str(small_set), "--mistakes"]) == 0
    out = capsys.readouterr().out
    assert "1 mistake(s):" in out
    assert "line 4: expected contradiction, got unrelated" in out


def test_json_summary(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval-conflicts", str(small_set), "--json", "--judge", "claims"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {"precision", "recall", "f1", "n", "accuracy", "confusion"} <= set(summary)
    assert summary["n"] == 4
    assert summary["precision"] == 1.0
    assert summary["recall"] == pytest.approx(0.6667)
    assert summary["confusion"]["contradiction"]["unrelated"] == 1
    assert "mistakes" not in summary


def test_json_on_the_holdout_meets_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval-conflicts", str(HOLDOUT), "--json", "--mistakes"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] >= 60
    assert summary["precision"] >= 0.85 and summary["recall"] >= 0.75
    assert len(summary["mistakes"]) == round(summary["n"] * (1 - summary["accuracy"]))


def test_judge_options_are_passed_as_json_values(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval-conflicts", str(small_set), "--json", "--option", "threshold=0.99"]) == 0
    assert json.loads(capsys.readouterr().out)["recall"] == 0.0


def test_bad_line_is_reported_with_its_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": "x", "b": "y", "label": "compatible"}\n{"a": "x"}\n', encoding="utf-8")
    assert main(["eval-conflicts", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: 'b' must be a non-empty string" in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval-conflicts", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read labelled pairs" in capsys.readouterr().err


def test_unknown_judge_is_a_usage_error(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval-conflicts", str(small_set), "--judge", "oracle"])
    assert info.value.code == 2
    assert "invalid choice: 'oracle'" in capsys.readouterr().err


def test_malformed_option(small_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval-conflicts", str(small_set), "--option", "threshold"])
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_bad_option_value_and_unreachable_llm(
    small_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval-conflicts", str(small_set), "--option", "threshold=7"]) == 2
    assert "'threshold' = 7" in capsys.readouterr().err
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"base_url=http://127.0.0.1:{port}/v1"
    assert main(["eval-conflicts", str(small_set), "--judge", "llm", "--option", url]) == 2
    assert "LLM judge: request to" in capsys.readouterr().err
