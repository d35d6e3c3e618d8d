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

from memory_core.boundary import FileLimits, decoded_text, excerpt, json_value
from memory_core.dashboard.limits import memory_text
from memory_core.errors import InputError, SessionFormatError, UploadError
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
        UploadError: a limit of the shared reader (size, encoding, depth, a huge field).
        SessionFormatError: every problem, each naming the upload (never a server path),
            texts longer than the engine takes included.
        InputError: an unknown ``fmt`` or an undetectable file.
    """
    shown = Path(name).name or "upload.json"
    check_upload(shown, data)  # limits before anything parses deeper
    chosen = detect_format(shown, data) if fmt == DETECT else fmt
    if chosen not in FORMATS:
        raise InputError("format", f"{excerpt(chosen)} is not one of {', '.join(FORMATS)}")
    with tempfile.TemporaryDirectory(prefix="atlas-upload-") as folder:
        path = Path(folder) / shown
        path.write_bytes(data)
        with _shown_as(path, shown):
            done = import_files(FORMATS[chosen], [path], options or ImportOptions())
    opened = [replace(c, source=c.source.replace(str(path), shown)) for _, c in done]
    for conversation in opened:
        check_texts(conversation)
    return opened


CONVERSATION_LIMITS = FileLimits(max_bytes=64 * 1024 * 1024, max_field_chars=1_000_000)
"""An uploaded conversation: its turns are checked against the engine's limit after
parsing (``check_texts``); this only stops files no conversation can be."""


def check_upload(name: str, data: bytes) -> None:
    """The shared reader's limits for a conversation upload (size, encoding, depth,
    string length); ``.jsonl`` is checked line by line.

    Raises:
        UploadError: the first limit broken, naming the upload and where.
    """
    if not name.lower().endswith(".jsonl"):
        json_value(name, data, CONVERSATION_LIMITS)
        return
    decoded_text(name, data, CONVERSATION_LIMITS)
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            try:
                json_value(name, line, CONVERSATION_LIMITS)
            except UploadError as exc:
                raise UploadError(name, f"line {number}: {exc.field}", exc.problem) from None


def check_texts(conversation: Conversation) -> Conversation:
    """Every turn, key fact and probe fits the engine (``limits.memory_text``): a text it
    refuses would fail the A/B replay halfway, far from here.

    Raises:
        SessionFormatError: every text that does not fit, by JSON path.
    """
    where: list[tuple[str, str, str]] = [
        (f"$.sessions[{i}].turns[{j}].text", "text", turn.text)
        for i, session in enumerate(conversation.sessions)
        for j, turn in enumerate(session.turns)
    ]
    for k, fact in enumerate(conversation.key_facts):
        where += [(f"$.key_facts[{k}].fact", "fact", fact.fact)]
        where += [(f"$.key_facts[{k}].probe", "probe", fact.probe)]
    problems = []
    for path, field, text in where:
        try:
            memory_text(text, field)
        except InputError as exc:
            problems.append(f"{conversation.source}: {path}: {exc.problem}")
    if problems:
        raise SessionFormatError(conversation.source, problems)
    return conversation


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
        return check_texts(replace(load_conversation(path), source=path.name))


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
    return check_texts(parse_conversation(data, conversation.source))


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
