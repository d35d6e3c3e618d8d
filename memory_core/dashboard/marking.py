"""Marking key facts: open a conversation, add and edit its key facts, save it for tuning.

Uploads go through the same converters and checks as ``atlas import`` and ``atlas
validate``: every problem is collected with its JSON path and nothing is kept when one is
found. Every change to the key facts rebuilds the conversation through the format's
validation, so a draft in the page is always a valid ``atlas-session/1`` conversation, and
saving writes it atomically into the data folder's ``conversations`` (the tuning page
lists it as ``yours/<id>``).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory_core.errors import InputError, SessionFormatError
from memory_core.harness.importers import IMPORTERS, ImportedConversation, ImportOptions
from memory_core.harness.importers.base import Importer
from memory_core.harness.importers.batch import import_files, write_conversations
from memory_core.harness.session_format import (
    FORMAT,
    Conversation,
    Expect,
    conversation_to_dict,
    load_conversation,
    parse_conversation,
)
from memory_core.paths import conversations_dir

EXPECTS: tuple[Expect, ...] = ("recalled", "forgotten")
DETECT = "detect"
_PROBLEM = re.compile(r"^(?:converted )?(?P<file>.*?): (?P<where>\$\S*): (?P<what>.*)$", re.DOTALL)
_FACT_ID = re.compile(r"k(\d+)")


def _session_file(path: Path, options: ImportOptions) -> list[ImportedConversation]:
    """An ``atlas-session/1`` file as it is, checked as ``atlas validate`` checks it."""
    conversation = load_conversation(path, max_bytes=options.max_bytes)
    return [ImportedConversation(data=conversation_to_dict(conversation), source=str(path))]


FORMATS: dict[str, Importer] = {FORMAT: _session_file, **IMPORTERS}
"""What an upload may be: the format itself, or anything ``atlas import`` converts."""

_SIGNS: dict[str, Callable[[Any], bool]] = {
    FORMAT: lambda d: isinstance(d, dict) and d.get("format") == FORMAT,
    "openai-chat": lambda d: isinstance(d, dict) and "messages" in d,
    "locomo": lambda d: _first(d).keys() & {"qa", "conversation", "speaker_a"} != set(),
    "longmemeval": lambda d: "haystack_sessions" in _first(d),
}
"""How each format's top level looks; the first that matches names an upload's format."""


def _first(data: Any) -> dict[str, Any]:
    item = data[0] if isinstance(data, list) and data else data
    return item if isinstance(item, dict) else {}


def detect_format(name: str, data: bytes) -> str:
    """The format an upload looks like (``.jsonl`` is a chat log, one conversation per line).

    A file that is no JSON at all is taken as ``atlas-session/1``, whose reader then says
    exactly where the JSON breaks.

    Raises:
        InputError: no format matches; names the upload and the formats there are.
    """
    if name.lower().endswith(".jsonl"):
        return "openai-chat"
    try:
        decoded = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return FORMAT
    found = next((fmt for fmt, sign in _SIGNS.items() if sign(decoded)), None)
    if found is None:
        raise InputError(
            "format",
            f"{name} looks like none of {', '.join(FORMATS)}; pick the format it is in",
        )
    return found


def open_upload(
    name: str, data: bytes, fmt: str = DETECT, options: ImportOptions | None = None
) -> list[Conversation]:
    """The conversations of an uploaded file, validated; nothing is stored anywhere.

    Raises:
        SessionFormatError: every problem, each naming the upload (never a server path).
        InputError: an unknown ``fmt`` or an undetectable file.
    """
    shown = Path(name).name or "upload.json"
    chosen = detect_format(shown, data) if fmt == DETECT else fmt
    if chosen not in FORMATS:
        raise InputError("format", f"{chosen!r} is not one of {', '.join(FORMATS)}")
    with tempfile.TemporaryDirectory(prefix="atlas-upload-") as folder:
        path = Path(folder) / shown
        path.write_bytes(data)
        with _shown_as(path, shown):
            done = import_files(FORMATS[chosen], [path], options or ImportOptions())
    return [replace(c, source=c.source.replace(str(path), shown)) for _, c in done]


@contextmanager
def _shown_as(path: Path, shown: str) -> Iterator[None]:
    """Problems name ``shown`` where they would name ``path`` (a server path means nothing
    to the person who uploaded or picked the file)."""
    try:
        yield
    except SessionFormatError as exc:
        raise SessionFormatError(
            shown, [p.replace(str(path), shown) for p in exc.problems]
        ) from None


def problem_rows(problems: Sequence[str]) -> list[dict[str, str]]:
    """``file: $.path: message`` lines as rows of a table: file, field (JSON path), problem."""
    rows = []
    for line in problems:
        match = _PROBLEM.match(line)
        if match is None:
            rows.append({"file": "", "field": "", "problem": line})
        else:
            rows.append({"file": match["file"], "field": match["where"], "problem": match["what"]})
    return rows


def open_saved(name: str, folder: Path | None = None) -> Conversation:
    """A conversation of the data folder by file stem (``SessionFormatError`` when invalid)."""
    path = (folder or conversations_dir()) / f"{name}.json"
    with _shown_as(path, path.name):
        return replace(load_conversation(path), source=path.name)


def saved_names(folder: Path | None = None) -> list[str]:
    """File stems of the data folder's conversations, sorted."""
    where = folder or conversations_dir()
    return sorted(p.stem for p in where.glob("*.json") if p.is_file()) if where.is_dir() else []


def next_fact_id(conversation: Conversation) -> str:
    """``k<n>``, one past the highest ``k`` number in use (ids of other forms are left alone)."""
    used = [int(m[1]) for f in conversation.key_facts if (m := _FACT_ID.fullmatch(f.id))]
    taken = {f.id for f in conversation.key_facts}
    n = max(used, default=0) + 1
    while f"k{n}" in taken:
        n += 1
    return f"k{n}"


def add_fact(
    conversation: Conversation,
    *,
    evidence: Sequence[str],
    fact: str,
    probe: str,
    expect: str = "recalled",
) -> Conversation:
    """The conversation with one more key fact (id ``k<n>``), validated as a whole.

    Raises:
        SessionFormatError: the new fact's problems, each with its JSON path
            (``$.key_facts[3].probe: ...``); the conversation passed in is unchanged.
    """
    new = {
        "id": next_fact_id(conversation),
        "fact": fact.strip(),
        "evidence": list(evidence),
        "probe": probe.strip(),
        "expect": expect,
    }
    return with_facts(conversation, [*fact_rows(conversation), new])


def fact_rows(conversation: Conversation) -> list[dict[str, Any]]:
    """The key facts as the format's JSON objects (the page's table and its edits)."""
    return list(conversation_to_dict(conversation)["key_facts"])


def with_facts(conversation: Conversation, facts: Sequence[Mapping[str, Any]]) -> Conversation:
    """The conversation with exactly ``facts`` (format JSON objects), validated as a whole."""
    data = conversation_to_dict(conversation)
    data["key_facts"] = [dict(f) for f in facts]
    return parse_conversation(data, conversation.source)


def save_conversation(
    conversation: Conversation, folder: Path | None = None, *, overwrite: bool = False
) -> Path:
    """Write ``<id>.json`` into the data folder's conversations (atomically).

    Raises:
        InputError: the file exists and ``overwrite`` is false; nothing is written.
    """
    where = folder or conversations_dir()
    target = where / f"{conversation.id}.json"
    if target.exists() and not overwrite:
        raise InputError(
            "file",
            f"{target.name} already exists in the data folder; tick Replace to overwrite it",
        )
    item = ImportedConversation(data=conversation_to_dict(conversation), source=conversation.source)
    return write_conversations([item], where, force=True)[0]
