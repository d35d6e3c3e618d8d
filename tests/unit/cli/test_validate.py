"""``atlas validate``: output per file and exit codes."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory_core.cli import validate


def main(argv: Sequence[str]) -> int:
    """Only this subcommand, so the test does not import every other command's dependencies."""
    parser = argparse.ArgumentParser(prog="atlas")
    validate.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def doc(conv_id: str = "c1", evidence: str = "s1-t1") -> dict[str, Any]:
    return {
        "format": "atlas-session/1",
        "id": conv_id,
        "sessions": [
            {
                "id": "s1",
                "started_at": "2024-01-01T10:00:00+00:00",
                "turns": [
                    {"id": "s1-t1", "speaker": "user", "text": "I live in Leeds."},
                    {"id": "s1-t2", "speaker": "assistant", "text": "Lovely city."},
                ],
            }
        ],
        "key_facts": [
            {"id": "kf1", "fact": "lives in Leeds", "evidence": [evidence], "probe": "Home town?"}
        ],
    }


def write(folder: Path, name: str, content: dict[str, Any] | str) -> Path:
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_valid_file_prints_ok_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "a.json", doc())
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"OK {path}: 1 sessions, 2 turns, 1 key facts" in out
    assert out.rstrip().endswith("1 valid, 0 invalid")


def test_invalid_file_prints_every_problem_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = doc(evidence="s9-t9")
    bad["sessions"][0]["turns"][1]["text"] = " "
    path = write(tmp_path, "bad.json", bad)
    assert main(["validate", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"INVALID {path}: 2 problem(s)"
    assert f"  {path}: $.key_facts[0].evidence[0]: unknown turn id 's9-t9'" in lines
    assert f"  {path}: $.sessions[0].turns[1].text: text is empty" in lines


def test_mixed_folder_reports_each_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "a.json", doc("a"))
    write(tmp_path, "b.json", "{not json")
    write(tmp_path, "c.json", doc("c"))
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.count("OK ") == 2
    assert f"{tmp_path / 'b.json'}: line 1: column 2: invalid JSON" in out
    assert "2 valid, 1 invalid" in out


def test_missing_path_and_empty_folder_are_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["validate", str(tmp_path / "absent.json"), str(empty)]) == 1
    out = capsys.readouterr().out
    assert "cannot read the file" in out
    assert "folder holds no *.json files" in out
    assert "0 valid, 2 invalid" in out


def test_max_bytes_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "a.json", doc())
    assert main(["validate", "--max-bytes", "50", str(path)]) == 1
    assert "larger than the limit of 50 bytes" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["validate", "--max-bytes", "0", str(path)])
    assert info.value.code == 2
    assert "must be a whole number >= 1" in capsys.readouterr().err


def test_needs_at_least_one_path(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate"])
    assert info.value.code == 2


def test_registered_in_the_atlas_command() -> None:
    from memory_core.cli import COMMAND_MODULES

    assert "validate" in COMMAND_MODULES
