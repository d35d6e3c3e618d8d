"""Reading conversation files: size-capped, UTF-8, JSON decoded with the line of the
first problem, then parsed (``checks``); folders expand to the files inside them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory_core.boundary import strict_json
from memory_core.errors import SessionFormatError, UploadError
from memory_core.harness.session_format.checks import parse_conversation
from memory_core.harness.session_format.records import Conversation

DEFAULT_MAX_BYTES = 20 * 1024 * 1024


def session_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders to the ``*.json`` files directly inside them (sorted); keep files as given.

    A folder without any ``*.json`` file is a ``SessionFormatError``: it is almost always a
    wrong path, and silently replaying nothing would look like a perfect run.
    """
    files: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise SessionFormatError(str(path), [f"{path}: $: folder holds no *.json files"])
            files.extend(found)
        else:
            files.append(path)
    return list(dict.fromkeys(files))


def load_conversation(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Conversation:
    """Read and validate one file; raises ``SessionFormatError`` listing every problem."""
    source = str(path)
    return parse_conversation(_read_json(Path(path), source, max_bytes), source)


def load_conversations(
    paths: Iterable[str | Path], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[Conversation]:
    """Load files and folders; the problems of all files are raised together.

    Conversation ids must be unique across the set because results are keyed by them.
    """
    conversations: list[Conversation] = []
    problems: list[str] = []
    first_file: dict[str, str] = {}
    for path in session_files(paths):
        try:
            conversation = load_conversation(path, max_bytes=max_bytes)
        except SessionFormatError as exc:
            problems.extend(exc.problems)
            continue
        if conversation.id in first_file:
            problems.append(
                f"{path}: $.id: conversation id {conversation.id!r} is already used by "
                f"{first_file[conversation.id]}"
            )
            continue
        first_file[conversation.id] = str(path)
        conversations.append(conversation)
    if problems:
        raise SessionFormatError("session files", problems)
    return conversations


def validate_file(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[str]:
    """Every problem of one file as ``"file: $.json.path: message"``; empty when valid."""
    try:
        load_conversation(path, max_bytes=max_bytes)
    except SessionFormatError as exc:
        return exc.problems
    return []


def _read_json(path: Path, source: str, max_bytes: int) -> Any:
    return decode_json(read_text(path, source=source, max_bytes=max_bytes), source)


def read_text(path: Path, *, source: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The file as UTF-8 text (a BOM is dropped); too large or unreadable is a ``SessionFormatError``."""

    def fail(message: str) -> SessionFormatError:
        return SessionFormatError(source, [f"{source}: $: {message}"])

    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise fail(f"cannot read the file ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise fail(f"file is larger than the limit of {max_bytes} bytes")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text (invalid byte at offset {exc.start})") from None


def decode_json(text: str, source: str) -> Any:
    """Strict JSON, read by the boundary's one parser (``boundary.strict_json``: nesting
    checked first, no ``NaN``/``Infinity``, no duplicate keys); its refusal becomes this
    format's ``SessionFormatError``."""
    try:
        return strict_json(source, text)
    except UploadError as exc:
        raise SessionFormatError(source, [str(exc)]) from None
