"""``atlas knowledge``: import / list / sample through the real argument parser."""

from pathlib import Path

import pytest

from memory_core.cli import main


def _args(tmp_path: Path, *args: str) -> list[str]:
    return [
        "knowledge",
        *args,
        "--db",
        f"sqlite:///{tmp_path / 'atlas.db'}",
        "--embedder",
        "hashing",
    ]


def test_sample_then_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_args(tmp_path, "sample")) == 0
    assert "8 item version(s) and 3 citation(s) added" in capsys.readouterr().out
    assert main(_args(tmp_path, "sample")) == 0
    assert "8 already present" in capsys.readouterr().out
    assert main(_args(tmp_path, "list", "--status", "expired")) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("policy.travel") and "v3.1 " in lines[0]


def test_import_reports_row_errors_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.csv"
    path.write_text(
        "key,content,source_kind,source_name,version,effective_from,confidence\n"
        "k1,Hello policy,first_party_system,HR_API,1,2024-01-01,0.9\n"
        "k2,Bad one,first_party_system,HR_API,1,2024-01-01,2\n",
        encoding="utf-8",
    )
    assert main(_args(tmp_path, "import", str(path), "--trust", "HR_API")) == 1
    captured = capsys.readouterr()
    assert "imported k1 v1 (active)" in captured.out
    assert "1 imported, 1 row(s) rejected" in captured.out
    assert "rejected row 2: confidence" in captured.err
    assert main(_args(tmp_path, "list")) == 0
    assert "k1" in capsys.readouterr().out


def test_unreadable_file_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args(tmp_path, "import", str(tmp_path / "none.json"))) == 2
    assert "atlas: error: file: cannot read" in capsys.readouterr().err
