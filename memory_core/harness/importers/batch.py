"""A batch of imports, all or nothing: every file converted and validated before one is written.

Nothing half-written ever lands in the output folder: files are written into a temporary
folder inside it and then renamed into place, and existing files are only replaced when the
caller says so.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from memory_core.errors import InputError, SessionFormatError
from memory_core.harness.importers.base import (
    ImportedConversation,
    Importer,
    ImportOptions,
    Source,
    SourceImporter,
)
from memory_core.harness.session_format import Conversation, parse_conversation


def import_files(
    importer: Importer, paths: Iterable[Path], options: ImportOptions
) -> list[tuple[ImportedConversation, Conversation]]:
    """Convert and validate every file; the problems of all files are raised together.

    Conversation ids must be unique across the batch because they name the output files.
    """
    batch = _Batch()
    for path in paths:
        try:
            imported = importer(path, options)
        except SessionFormatError as exc:
            batch.problems.extend(exc.problems)
            continue
        for item in imported:
            batch.check(item)
    return batch.result()


def import_source(
    importer: SourceImporter, source: Source, options: ImportOptions
) -> list[tuple[ImportedConversation, Conversation]]:
    """Convert and validate what a source importer reads (``atlas import recording``)."""
    batch = _Batch()
    for item in importer(source, options):
        batch.check(item)
    return batch.result()


class _Batch:
    """Conversations checked as ``atlas validate`` would, with unique ids; problems collected."""

    def __init__(self) -> None:
        self.done: list[tuple[ImportedConversation, Conversation]] = []
        self.problems: list[str] = []
        self._first_source: dict[str, str] = {}

    def check(self, item: ImportedConversation) -> None:
        try:
            checked = parse_conversation(item.data, item.source)
        except SessionFormatError as exc:
            self.problems.extend(f"converted {p}" for p in exc.problems)
            return
        if item.id in self._first_source:
            self.problems.append(
                f"{item.source}: conversation id {item.id!r} is already used by "
                f"{self._first_source[item.id]} (both would be written to {item.id}.json)"
            )
            return
        self._first_source[item.id] = item.source
        self.done.append((item, checked))

    def result(self) -> list[tuple[ImportedConversation, Conversation]]:
        """Every conversation, or a ``SessionFormatError`` with all problems."""
        if self.problems:
            raise SessionFormatError("import", self.problems)
        return self.done


def write_conversations(
    conversations: Iterable[ImportedConversation], out: Path, *, force: bool = False
) -> list[Path]:
    """Write ``<id>.json`` files into ``out``; refuses to replace files unless ``force``."""
    items = list(conversations)
    targets = [out / f"{item.id}.json" for item in items]
    if out.exists() and not out.is_dir():
        raise InputError("out", f"{out} exists and is not a folder")
    folders = [t.name for t in targets if t.is_dir()]
    if folders:
        raise InputError("out", f"{', '.join(folders)} in {out} are folders, not files")
    existing = [t.name for t in targets if t.exists()]
    if existing and not force:
        shown = ", ".join(existing[:5]) + (" ..." if len(existing) > 5 else "")
        raise InputError(
            "out",
            f"{len(existing)} file(s) already exist in {out} ({shown}); "
            "pass --force to overwrite them",
        )
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".atlas-import-", dir=out))
    try:
        for item, target in zip(items, targets, strict=True):
            text = json.dumps(item.data, indent=1, ensure_ascii=False) + "\n"
            (staging / target.name).write_text(text, encoding="utf-8")
        for target in targets:
            os.replace(staging / target.name, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return targets
