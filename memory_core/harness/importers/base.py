"""What every importer shares: options, results, and input errors that name their JSON path.

An importer turns one foreign file into ``atlas-session/1`` JSON; it never writes. Bad input
raises ``SessionFormatError`` naming the file, the JSON path and what was expected there, so
a user can find the spot in a file of hundreds of megabytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memory_core.errors import SessionFormatError
from memory_core.harness.session_format import (
    DEFAULT_TURN_GAP_SECONDS,
    FORMAT,
    JsonPath,
    decode_json,
    is_id,
    is_speaker,
    read_text,
    render_path,
)

# Benchmark files are far larger than hand-written session files (LongMemEval_S: ~280 MB).
DEFAULT_IMPORT_MAX_BYTES = 1024 * 1024 * 1024
DEFAULT_SESSION_GAP_SECONDS = 30 * 60.0
_NOT_ID_CHAR = re.compile(r"[^A-Za-z0-9._:-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportOptions:
    """Choices the user makes on the command line; each importer reads the ones it knows."""

    include_unanswerable: bool = False  # LoCoMo category 5, LongMemEval ``_abs`` questions
    include_system: bool = False  # openai-chat: system, developer and tool messages
    session_gap: float = DEFAULT_SESSION_GAP_SECONDS  # openai-chat: a longer silence splits
    max_bytes: int = DEFAULT_IMPORT_MAX_BYTES


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportedConversation:
    """One converted conversation (not yet validated) and what was left out on the way."""

    data: dict[str, Any]
    source: str
    dropped_evidence: int = 0  # duplicate or unknown evidence turn ids removed from questions
    dropped_facts: int = 0  # questions left without any evidence turn
    unanswerable: int = 0  # unanswerable questions met (kept only with include_unanswerable)
    skipped_messages: int = 0  # system/tool messages left out, messages without text

    @property
    def id(self) -> str:
        return str(self.data["id"])

    def warning(self) -> str | None:
        """The one warning about dropped evidence, or None when nothing was dropped."""
        if not (self.dropped_evidence or self.dropped_facts):
            return None
        return (
            f"{self.source}: dropped {self.dropped_evidence} duplicate or unknown evidence id(s) "
            f"and {self.dropped_facts} question(s) left without evidence"
        )


Importer = Callable[[Path, ImportOptions], list[ImportedConversation]]
"""A file format: one input file to its conversations."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where a source importer reads: a database URL (None: the default one) and an atlas in it."""

    database: str | None
    atlas: str


SourceImporter = Callable[[Source, ImportOptions], list[ImportedConversation]]
"""A source that is not a file (a recorded atlas in a database) to its conversations."""


@dataclass(frozen=True, slots=True)
class At:
    """A decoded JSON value and where it sits; every accessor complains with file and path."""

    value: Any
    source: str
    path: JsonPath = ()

    @property
    def location(self) -> str:
        """``file`` for the whole file, ``file $[3]`` for a part of it."""
        return f"{self.source} {render_path(self.path)}" if self.path else self.source

    def error(self, expected: str) -> SessionFormatError:
        return SessionFormatError(
            self.source, [f"{self.source}: {render_path(self.path)}: {expected}"]
        )

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def get(self, key: str) -> At:
        """A required field of an object."""
        if not isinstance(self.value, dict):
            raise self.error(f"expected an object with field {key!r}, got {describe(self.value)}")
        if key not in self.value:
            raise self.error(f"missing field {key!r}")
        return At(self.value[key], self.source, (*self.path, key))

    def opt(self, key: str) -> At | None:
        """An optional field; absent and ``null`` are the same."""
        if self.has(key) and self.value[key] is not None:
            return self.get(key)
        return None

    def items(self) -> list[At]:
        if not isinstance(self.value, list):
            raise self.error(f"expected a list, got {describe(self.value)}")
        return [At(v, self.source, (*self.path, i)) for i, v in enumerate(self.value)]

    def fields(self) -> list[str]:
        if not isinstance(self.value, dict):
            raise self.error(f"expected an object, got {describe(self.value)}")
        return list(self.value)

    def string(self) -> str:
        """A string, possibly blank."""
        if not isinstance(self.value, str):
            raise self.error(f"expected a string, got {describe(self.value)}")
        return self.value

    def text(self) -> str:
        """A string that is not blank."""
        value = self.string()
        if not value.strip():
            raise self.error("expected a non-empty string")
        return value

    def flag(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {describe(self.value)}")
        return self.value

    def integer(self, allowed: Iterable[int]) -> int:
        options = tuple(allowed)
        if type(self.value) is not int or self.value not in options:
            raise self.error(f"expected one of {list(options)}, got {describe(self.value)}")
        return self.value

    def scalar_text(self) -> str:
        """A string or a number as text (benchmark answers are sometimes integers)."""
        if isinstance(self.value, int | float) and not isinstance(self.value, bool):
            return str(self.value)
        return self.text()

    def speaker(self) -> str:
        name = self.text()
        if not is_speaker(name):
            raise self.error(
                f"speaker {name!r} is not a name of 1 to 64 letters, digits, spaces or . _ ' - "
                "starting with a letter or digit"
            )
        return name

    def ident(self) -> str:
        """A string usable as an atlas id as it is (turn ids that evidence refers to)."""
        value = self.text()
        if not is_id(value):
            raise self.error(
                f"id {value!r} is not 1 to 128 letters, digits or . _ : - starting with a "
                "letter or digit"
            )
        return value


def read_json(path: Path, options: ImportOptions) -> At:
    """The whole file as one JSON document, located at ``$`` of ``path`` for errors."""
    source = str(path)
    return At(
        decode_json(read_text(path, source=source, max_bytes=options.max_bytes), source), source
    )


def describe(value: Any) -> str:
    """``null``, ``a number (5)``, ``a string ('x')``: how a wrong value is shown in errors."""
    if value is None:
        return "null"
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(type(value))
    if kind is not None:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        return f"{kind} ({shown})"
    return "a list" if isinstance(value, list) else "an object"


def atlas_id(*parts: str) -> str:
    """A conversation or fact id built from foreign names: other characters become ``-``."""
    joined = _NOT_ID_CHAR.sub("-", "-".join(parts)).strip("-._:")
    return joined[:128] or "conversation"


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


@dataclass(frozen=True, slots=True)
class DraftSession:
    """A session before its start is settled; turns carry an ``at`` only when the source had one."""

    start: datetime
    turns: list[dict[str, Any]]
    date: At  # where the start came from, for the out-of-order error


def chain_sessions(drafts: list[DraftSession]) -> list[dict[str, Any]]:
    """Sessions with ids ``s1``, ``s2``, ...; a start inside the previous session is moved to its end.

    Turns without ``at`` are 30 s apart (the format's default), so a session dated a minute
    after a long previous one would overlap it; it then starts where the previous one ends.
    A session dated before the previous session started is a real error and is reported.
    """
    sessions: list[dict[str, Any]] = []
    previous_start: datetime | None = None
    previous_end: datetime | None = None
    for n, draft in enumerate(drafts, start=1):
        start = draft.start
        if previous_start is not None and start < previous_start:
            raise draft.date.error(
                f"session date {iso(start)} is before the previous session's date "
                f"{iso(previous_start)}; sessions must be in chronological order"
            )
        if previous_end is not None and start < previous_end:
            start = previous_end
        sessions.append({"id": f"s{n}", "started_at": iso(start), "turns": draft.turns})
        previous_start = draft.start
        previous_end = _session_end(start, draft.turns)
    return sessions


def _session_end(start: datetime, turns: list[dict[str, Any]]) -> datetime:
    clock = start
    for i, turn in enumerate(turns):
        at = turn.get("at")
        if at is not None:
            clock = max(clock, datetime.fromisoformat(at))
        elif i:
            clock += timedelta(seconds=DEFAULT_TURN_GAP_SECONDS)
    return clock


def clean_evidence(given: list[str], known: set[str]) -> tuple[list[str], int]:
    """Evidence ids in order without repeats or unknown turns, and how many were removed."""
    kept = [turn_id for turn_id in dict.fromkeys(given) if turn_id in known]
    return kept, len(given) - len(kept)


def evidence_ids(at: At) -> list[str]:
    """A list of turn-id strings (not checked against the turns: see ``clean_evidence``)."""
    items = at.items()
    for item in items:
        if not isinstance(item.value, str):
            raise item.error(f"expected a turn id string, got {describe(item.value)}")
    return [item.value for item in items]


def conversation(
    *,
    conv_id: str,
    title: str,
    description: str,
    sessions: list[dict[str, Any]],
    facts: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "id": conv_id,
        "title": title,
        "description": description,
        "sessions": sessions,
        "key_facts": facts,
    }
