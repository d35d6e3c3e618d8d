"""Building the ``atlas`` parser stays cheap: heavy libraries load only in the command that runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memory_core.cli import build_parser
from memory_core.cli.options import LazyChoices
from memory_core.knowledge import ItemStatus

HEAVY = ("torch", "sentence_transformers", "optuna", "streamlit", "sqlalchemy", "alembic", "scipy")

PROBE = f"""
import json, sys
import memory_core.cli
memory_core.cli.build_parser()
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_building_the_parser_imports_no_heavy_library() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_lazy_choices_load_once_and_only_when_used() -> None:
    calls: list[int] = []

    def load() -> list[str]:
        calls.append(1)
        return ["b", "a"]

    choices = LazyChoices(load)
    assert calls == []
    assert list(choices) == ["a", "b"] and "a" in choices and "c" not in choices
    assert len(choices) == 2 and choices[0] == "a"
    assert calls == [1]


def test_lazy_choices_still_refuse_and_list_values(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["knowledge", "list", "--status", "bogus"])
    err = capsys.readouterr().err
    assert "invalid choice: 'bogus'" in err and "'active'" in err
    with pytest.raises(SystemExit):
        parser.parse_args(["simulate", "x.json", "--policy", "nope"])
    assert "'atlas'" in capsys.readouterr().err
    args = parser.parse_args(["knowledge", "list", "--status", "active"])
    assert args.status == "active"


def test_help_expands_lazy_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["knowledge", "list", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "STATUS one of " + ", ".join(sorted(s.value for s in ItemStatus)) in out
