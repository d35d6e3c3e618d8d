"""A batch imports all or nothing, and ``atlas import`` reports and refuses as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.cli.import_cmd import duration
from memory_core.errors import InputError, SessionFormatError
from memory_core.harness.importers import (
    IMPORTERS,
    ImportOptions,
    import_files,
    write_conversations,
)

from .conftest import write
from .test_locomo import sample


def test_problems_of_every_file_are_raised_together(tmp_path: Path) -> None:
    good = write(tmp_path, "good.json", sample())
    bad_a = write(tmp_path, "bad_a.json", {"nothing": 1})
    bad_b = sample()
    del bad_b["qa"][0]["question"]
    bad_b_path = write(tmp_path, "bad_b.json", bad_b)
    with pytest.raises(SessionFormatError) as info:
        import_files(IMPORTERS["locomo"], [good, bad_a, bad_b_path], ImportOptions())
    assert [p.split(": ")[0] for p in info.value.problems] == [str(bad_a), str(bad_b_path)]


def test_duplicate_conversation_ids_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = (
        write(tmp_path / "a", "26.json", sample()),
        write(tmp_path / "b", "26.json", sample()),
    )
    with pytest.raises(SessionFormatError, match=r"conversation id 'locomo-26' is already used"):
        import_files(IMPORTERS["locomo"], [one, two], ImportOptions())


def test_write_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    converted = import_files(
        IMPORTERS["locomo"], [write(tmp_path, "26.json", sample())], ImportOptions()
    )
    out = tmp_path / "out" / "nested"
    [path] = write_conversations([item for item, _ in converted], out)
    assert path == out / "locomo-26.json" and json.loads(path.read_text())["id"] == "locomo-26"
    path.write_text("hand edits")
    with pytest.raises(InputError, match=r"1 file\(s\) already exist .* pass --force"):
        write_conversations([item for item, _ in converted], out)
    assert path.read_text() == "hand edits"
    write_conversations([item for item, _ in converted], out, force=True)
    assert json.loads(path.read_text())["id"] == "locomo-26"
    assert sorted(p.name for p in out.iterdir()) == ["locomo-26.json"]  # no staging left behind


def test_out_must_be_a_folder_of_files(tmp_path: Path) -> None:
    converted = import_files(
        IMPORTERS["locomo"], [write(tmp_path, "26.json", sample())], ImportOptions()
    )
    with pytest.raises(InputError, match="is not a folder"):
        write_conversations([item for item, _ in converted], write(tmp_path, "file", "x"))
    (tmp_path / "out" / "locomo-26.json").mkdir(parents=True)
    with pytest.raises(InputError, match=r"locomo-26.json in .* are folders, not files"):
        write_conversations([item for item, _ in converted], tmp_path / "out", force=True)


def test_cli_writes_validated_files_and_prints_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path, "26.json", sample())
    out = tmp_path / "out"
    assert main(["import", "locomo", str(src), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{out / 'locomo-26.json'}: 5 turns, 2 sessions, 3 key facts, 3 evidence ids and "
        f"1 questions dropped, 1 unanswerable left out (from {src})",
        f"1 conversation(s) written to {out}",
    ]
    assert captured.err.splitlines() == [
        f"warning: {src}: dropped 3 duplicate or unknown evidence id(s) and 1 question(s) "
        "left without evidence"
    ]
    assert main(["validate", str(out)]) == 0


def test_cli_writes_nothing_when_any_input_is_bad(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, "26.json", sample())
    bad = write(tmp_path, "27.json", {"speaker_a": "A"})
    out = tmp_path / "out"
    assert main(["import", "locomo", str(good), str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: $: missing field 'speaker_b'" in err
    assert not out.exists()
    assert main(["import", "locomo", str(good), "--out", str(out)]) == 0
    assert main(["import", "locomo", str(good), "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["import", "locomo", str(good), "--out", str(out), "--force"]) == 0


def test_cli_options_reach_the_importers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = {"messages": [
        {"role": "system", "content": "Be brief.", "timestamp": 0},
        {"role": "user", "content": "Hi", "timestamp": 10},
        {"role": "user", "content": "Still there?", "timestamp": 700},
    ]}  # fmt: skip
    src = write(tmp_path, "chat.json", log)
    out = tmp_path / "out"
    argv = ["import", "openai-chat", str(src), "--out", str(out), "--session-gap", "10m"]
    assert main(argv) == 0
    assert "2 turns, 2 sessions, 0 key facts" in capsys.readouterr().out
    assert main([*argv, "--include-system", "--force", "--session-gap", "1h"]) == 0
    assert "3 turns, 1 sessions" in capsys.readouterr().out
    assert main([*argv, "--force", "--max-bytes", "10"]) == 2
    assert "larger than the limit of 10 bytes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90.0), ("30m", 1800.0), ("2h", 7200.0), ("1.5d", 129600.0), ("45", 45.0)],
)
def test_duration(text: str, seconds: float) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["0m", "-5m", "soon", "5 weeks", ""])
def test_bad_duration_is_refused(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["import", "openai-chat", "x.json", "--out", "o", f"--session-gap={text}"])
    assert "must be a positive duration like 90s, 30m, 2h or 1d" in capsys.readouterr().err


def test_unknown_format_lists_the_formats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["import", "csv", "x.json", "--out", "o"])
    assert "'locomo', 'longmemeval', 'openai-chat'" in capsys.readouterr().err
