"""Named extra sections in a snapshot file, for data the engine does not own.

A part that keeps state beside the atlas (the task context graph) stores it in the same
file, so one snapshot (a file, a stored row, an erased row) always holds both. A
section is one uncompressed zip member ``section/<name>`` appended after the engine's
own members; the engine's reader skips them, and they are read back as bytes. The engine
never interprets a section: what is inside is its owner's format.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from memory_core.errors import InputError

PREFIX = "section/"
"""Zip member name prefix of every section (the engine's own members are ``*.npy``)."""
_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
MAX_SECTION_BYTES = 1 << 30


def is_section(member: str) -> bool:
    """Whether a zip member (or an ``np.load`` file name) is a section, not the engine's."""
    return member.startswith(PREFIX)


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputError(
            "section",
            f"name {name!r} must be 1-64 characters: lowercase letters, digits, '_', '.' or "
            "'-', starting with a letter",
        )
    return name


def add_sections(path: Path, sections: Mapping[str, bytes]) -> Path:
    """Append ``sections`` to the snapshot at ``path`` (written by ``write``).

    All names and values are checked before the file is touched; a name the file already
    holds is refused (a zip cannot replace a member in place). Not atomic on its own:
    callers that must not leave a half-written file write a temp file and rename it.
    """
    checked = {check_name(name): _bytes(name, data) for name, data in sections.items()}
    if not checked:
        return path
    present = set(read_sections(path))
    again = sorted(present & checked.keys())
    if again:
        raise InputError("section", f"{path} already holds the section {again[0]!r}")
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_STORED) as archive:
        for name, data in checked.items():
            archive.writestr(PREFIX + name, data)
    return path


def read_sections(path: Path | BinaryIO) -> dict[str, bytes]:
    """Every section of the snapshot at ``path`` (or in a binary buffer) by name (empty
    when it has none)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return {
                member[len(PREFIX) :]: archive.read(member)
                for member in archive.namelist()
                if is_section(member)
            }
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        where = path if isinstance(path, Path) else "the data"
        raise InputError("snapshot", f"{where} is not an atlas snapshot ({exc})") from exc


def _bytes(name: str, data: bytes) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError("section", f"{name!r} must be bytes, got {type(data).__name__}")
    if len(data) > MAX_SECTION_BYTES:
        raise InputError("section", f"{name!r} is {len(data)} bytes; at most {MAX_SECTION_BYTES}")
    return bytes(data)
