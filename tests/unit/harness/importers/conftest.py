"""Helpers for importer tests: write a fixture file, run an importer, catch its one problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.errors import SessionFormatError
from memory_core.harness.importers import IMPORTERS, ImportedConversation, ImportOptions
from memory_core.harness.session_format import Conversation, parse_conversation


def write(folder: Path, name: str, content: Any) -> Path:
    path = folder / name
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")
    return path


def convert(
    fmt: str, path: Path, **options: Any
) -> list[tuple[ImportedConversation, Conversation]]:
    """Import one file and validate every result as ``atlas import`` does."""
    items = IMPORTERS[fmt](path, ImportOptions(**options))
    return [(item, parse_conversation(item.data, item.source)) for item in items]


def problem(fmt: str, path: Path, **options: Any) -> str:
    """The single problem the importer raises for a bad file."""
    with pytest.raises(SessionFormatError) as info:
        IMPORTERS[fmt](path, ImportOptions(**options))
    assert len(info.value.problems) == 1, info.value.problems
    return info.value.problems[0]
