"""The ``atlas-session/1`` conversation format: typed records, loading and validation.

A file is checked twice: against the shipped JSON Schema (shapes, types, allowed values)
and by semantic checks the schema cannot express (unique ids, evidence that names real
turns, timezone-aware timestamps in order, non-empty texts). Both passes run on every
file and all problems are collected before anything is raised, so one ``atlas validate``
shows them all; nothing invalid is ever loaded. The format is described in
``docs/session-format.md``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from jsonschema import Draft202012Validator

from memory_core.errors import NotFoundError, SessionFormatError

FORMAT = "atlas-session/1"
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
# A turn without ``at`` is this long after the previous turn (the first: the session start).
DEFAULT_TURN_GAP_SECONDS = 30.0
_MAX_MESSAGE_CHARS = 240
_MAX_YEAR = 9998  # leaves room for default turn times and UTC rendering
SPEAKER_MAX_CHARS = 64
_SPEAKER_PUNCTUATION = frozenset(" ._'-")

Expect = Literal["recalled", "forgotten"]
JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance; ``at`` is seconds since the epoch."""

    id: str
    speaker: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A run of turns without a long break, e.g. one chat window."""

    id: str
    started_at: float
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class KeyFact:
    """What a memory should (``recalled``) or should no longer (``forgotten``) bring back.

    ``evidence`` names the turns that state the fact; ``probe`` is the question asked at
    the end, worded differently from the evidence so that recall is not string matching.
    """

    id: str
    fact: str
    evidence: tuple[str, ...]
    probe: str
    expect: Expect = "recalled"


@dataclass(frozen=True, slots=True)
class RecordedRead:
    """A read a recorded agent made (``atlas import recording``), replayed at ``at``.

    ``session`` is the read's scope (None: every session); ``returned`` names the turns
    behind the memories the agent got back, in rank order, which is what agreement@k
    checks a replay against.
    """

    id: str
    at: float
    session: str | None
    query: str
    top_k: int
    returned: tuple[str, ...]
    reinforce: bool = True


@dataclass(frozen=True, slots=True)
class Conversation:
    """A whole validated session file.

    ``reads`` is None for a simulated conversation and the agent's own reads (possibly
    none) for a recorded one; a replay then runs those instead of simulated ones.
    """

    id: str
    title: str
    description: str
    sessions: tuple[SessionRecord, ...]
    key_facts: tuple[KeyFact, ...]
    source: str
    reads: tuple[RecordedRead, ...] | None = None
    _turn_index: dict[str, Turn] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_turn_index", {t.id: t for t in self.turns()})

    def turns(self) -> Iterator[Turn]:
        """Every turn of every session, in conversation order."""
        for session in self.sessions:
            yield from session.turns

    def turn_by_id(self, turn_id: str) -> Turn:
        """The turn with this id; raises ``NotFoundError`` for an unknown id."""
        try:
            return self._turn_index[turn_id]
        except KeyError:
            raise NotFoundError("turn", turn_id) from None


def conversation_to_dict(conversation: Conversation) -> dict[str, Any]:
    """The ``atlas-session/1`` JSON form, every ``at`` explicit and in UTC (reads back equal)."""
    data = {
        "format": FORMAT,
        "id": conversation.id,
        "title": conversation.title,
        "description": conversation.description,
        "sessions": [
            {
                "id": session.id,
                "started_at": _iso(session.started_at),
                "turns": [
                    {"id": t.id, "speaker": t.speaker, "text": t.text, "at": _iso(t.at)}
                    for t in session.turns
                ],
            }
            for session in conversation.sessions
        ],
        "key_facts": [
            {
                "id": f.id,
                "fact": f.fact,
                "evidence": list(f.evidence),
                "probe": f.probe,
                "expect": f.expect,
            }
            for f in conversation.key_facts
        ],
    }
    if conversation.reads is not None:
        data["reads"] = [read_to_dict(r) for r in conversation.reads]
    return data


def read_to_dict(read: RecordedRead) -> dict[str, Any]:
    """One entry of ``reads`` (``session`` and ``reinforce`` only when not the default)."""
    item: dict[str, Any] = {"id": read.id, "at": _iso(read.at)}
    if read.session is not None:
        item["session"] = read.session
    item |= {"query": read.query, "top_k": read.top_k, "returned": list(read.returned)}
    if not read.reinforce:
        item["reinforce"] = False
    return item


# -- reading ------------------------------------------------------------------


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
    """Strict JSON: no ``NaN``/``Infinity`` and no duplicate keys (one value would be lost)."""

    def fail(message: str) -> SessionFormatError:
        return SessionFormatError(source, [f"{source}: $: {message}"])

    duplicates: list[str] = []

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                duplicates.append(key)
            obj[key] = value
        return obj

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not allowed in JSON")

    try:
        data = json.loads(text, object_pairs_hook=unique_keys, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise fail(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:  # NaN/Infinity, absurdly long integers
        raise fail(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise fail("JSON is nested too deeply") from None
    if duplicates:
        problems = [
            f"{source}: $: duplicate JSON key {k!r} (one value would be lost)" for k in duplicates
        ]
        raise SessionFormatError(source, problems)
    return data


# -- validation and building --------------------------------------------------


def parse_conversation(data: Any, source: str) -> Conversation:
    """Validate already-decoded JSON and build the records; raises ``SessionFormatError``."""
    found = _schema_problems(data)
    times = _TimeResolver()
    found += _semantic_problems(data, times)
    if found:
        found.sort(key=lambda item: _path_key(item[0]))
        raise SessionFormatError(source, [f"{source}: {render_path(p)}: {m}" for p, m in found])
    return _build(data, source, times)


@cache
def _schema() -> dict[str, Any]:
    text = (
        resources.files(__package__)
        .joinpath("schema/atlas-session-1.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Draft202012Validator:
    schema = _schema()
    return Draft202012Validator(_inline_refs(schema, schema["$defs"]))


@cache
def _id_pattern() -> re.Pattern[str]:
    return re.compile(_schema()["$defs"]["id"]["pattern"])


def is_id(value: str) -> bool:
    """Whether ``value`` may be a conversation, session, turn or key-fact id (the schema's rule)."""
    return _id_pattern().search(value) is not None


def _inline_refs(node: Any, defs: Mapping[str, Any]) -> Any:
    """Replace local ``$ref``s by their definitions: validation runs about 2.5x faster.

    The shipped schema has no recursive definitions, so this terminates.
    """
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def _schema_problems(data: Any) -> list[tuple[JsonPath, str]]:
    found = []
    for error in _validator().iter_errors(data):
        message = error.message
        if len(message) > _MAX_MESSAGE_CHARS:
            message = message[: _MAX_MESSAGE_CHARS - 3] + "..."
        found.append((tuple(error.absolute_path), message))
    return found


class _TimeResolver:
    """Epoch seconds of session starts and turns, filled in while checking order."""

    __slots__ = ("reads", "sessions", "turns")

    def __init__(self) -> None:
        self.sessions: dict[int, float] = {}
        self.turns: dict[tuple[int, int], float] = {}
        self.reads: dict[int, float] = {}


def _objects(value: Any, key: str) -> list[tuple[int, dict[str, Any]]]:
    """The dict items of ``value[key]`` with their index; wrong shapes are the schema's problem."""
    items = value.get(key) if isinstance(value, dict) else None
    if not isinstance(items, list):
        return []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def is_speaker(name: str) -> bool:
    """A speaker as people are named in the conversation: ``user``, ``Caroline``, ``Zoë O'Neill``.

    Letters of any script (with their combining marks), digits, spaces and ``. _ ' -``;
    1 to ``SPEAKER_MAX_CHARS`` characters, starting with a letter or digit, not ending in a space.
    Kept as said (not lower-cased): questions are about the speaker by name.
    """
    if not 0 < len(name) <= SPEAKER_MAX_CHARS or name.endswith(" "):
        return False
    if unicodedata.category(name[0])[0] not in "LN":
        return False
    return all(unicodedata.category(c)[0] in "LMN" or c in _SPEAKER_PUNCTUATION for c in name)


_SPEAKER_HELP = (
    f"is not a speaker name: 1 to {SPEAKER_MAX_CHARS} letters, digits, spaces or . _ ' -, "
    "starting with a letter or digit"
)


def _parse_time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None or moment.astimezone(UTC).year > _MAX_YEAR:
            return None
        return moment.timestamp()
    except (ValueError, OverflowError):
        return None


_TIME_HELP = (
    "is not an ISO-8601 date and time with a timezone in years 1 to 9998 "
    "(e.g. 2024-07-21T09:00:00+00:00)"
)


def _semantic_problems(data: Any, times: _TimeResolver) -> list[tuple[JsonPath, str]]:
    found: list[tuple[JsonPath, str]] = []
    seen: dict[str, dict[str, JsonPath]] = {
        "session": {},
        "turn": {},
        "key fact": {},
        "read": {},
    }
    turn_at: dict[str, float] = {}

    def unique(kind: str, ident: Any, path: JsonPath) -> None:
        if not isinstance(ident, str):
            return
        first = seen[kind].get(ident)
        if first is not None:
            found.append(
                (path, f"duplicate {kind} id {ident!r} (first used at {render_path(first)})")
            )
        else:
            seen[kind][ident] = path

    def not_empty(obj: dict[str, Any], key: str, path: JsonPath) -> None:
        value = obj.get(key)
        if isinstance(value, str) and not value.strip():
            found.append(((*path, key), f"{key} is empty"))

    previous_end: float | None = None  # last moment of the previous session
    for s, session in _objects(data, "sessions"):
        s_path: JsonPath = ("sessions", s)
        unique("session", session.get("id"), (*s_path, "id"))
        raw_start = session.get("started_at")
        start = _parse_time(raw_start)
        if start is None and isinstance(raw_start, str):
            found.append(((*s_path, "started_at"), f"{raw_start!r} {_TIME_HELP}"))
        if start is not None and previous_end is not None and start < previous_end:
            found.append(
                (
                    (*s_path, "started_at"),
                    f"session starts at {raw_start}, before the previous session's last turn "
                    f"at {_iso(previous_end)}; sessions must be in chronological order",
                )
            )
        clock = start
        for t, turn in _objects(session, "turns"):
            t_path: JsonPath = (*s_path, "turns", t)
            unique("turn", turn.get("id"), (*t_path, "id"))
            not_empty(turn, "text", t_path)
            speaker = turn.get("speaker")
            if (
                isinstance(speaker, str)
                and 0 < len(speaker) <= SPEAKER_MAX_CHARS  # else the schema reports it
                and not is_speaker(speaker)
            ):
                found.append(((*t_path, "speaker"), f"{speaker!r} {_SPEAKER_HELP}"))
            raw_at = turn.get("at")
            at = _parse_time(raw_at)
            if raw_at is not None and at is None and isinstance(raw_at, str):
                found.append(((*t_path, "at"), f"{raw_at!r} {_TIME_HELP}"))
            if start is None or clock is None or (raw_at is not None and at is None):
                continue  # an unreadable time is reported above and left out of the ordering
            if at is None:
                at = start if t == 0 else clock + DEFAULT_TURN_GAP_SECONDS
            elif at < start:
                found.append(((*t_path, "at"), f"{raw_at} is before the session start {raw_start}"))
            elif at < clock:
                found.append(
                    ((*t_path, "at"), f"{raw_at} is before the previous turn at {_iso(clock)}")
                )
            times.turns[(s, t)] = at
            if isinstance(turn.get("id"), str):
                turn_at.setdefault(turn["id"], at)
            clock = max(clock, at)
        if start is not None:
            times.sessions[s] = start
        if clock is not None:
            previous_end = clock

    for f, fact in _objects(data, "key_facts"):
        f_path: JsonPath = ("key_facts", f)
        unique("key fact", fact.get("id"), (*f_path, "id"))
        not_empty(fact, "fact", f_path)
        not_empty(fact, "probe", f_path)
        evidence = fact.get("evidence")
        if isinstance(evidence, list):
            for e, turn_id in enumerate(evidence):
                if isinstance(turn_id, str) and turn_id not in seen["turn"]:
                    found.append(((*f_path, "evidence", e), f"unknown turn id {turn_id!r}"))
    found += _read_problems(data, times, seen, turn_at)
    return found


def _read_problems(
    data: Any, times: _TimeResolver, seen: dict[str, dict[str, JsonPath]], turn_at: dict[str, float]
) -> list[tuple[JsonPath, str]]:
    """Recorded reads: unique ids, in time order, known sessions, turns said before the read."""
    found: list[tuple[JsonPath, str]] = []
    previous: float | None = None
    for r, read in _objects(data, "reads"):
        r_path: JsonPath = ("reads", r)
        ident = read.get("id")
        if isinstance(ident, str):
            if ident in seen["read"]:
                first = render_path(seen["read"][ident])
                found.append(
                    ((*r_path, "id"), f"duplicate read id {ident!r} (first used at {first})")
                )
            else:
                seen["read"][ident] = (*r_path, "id")
        query = read.get("query")
        if isinstance(query, str) and not query.strip():
            found.append(((*r_path, "query"), "query is empty"))
        session = read.get("session")
        if isinstance(session, str) and session not in seen["session"]:
            found.append(((*r_path, "session"), f"unknown session id {session!r}"))
        raw_at = read.get("at")
        at = _parse_time(raw_at)
        if at is None:
            if isinstance(raw_at, str):
                found.append(((*r_path, "at"), f"{raw_at!r} {_TIME_HELP}"))
            continue
        if previous is not None and at < previous:
            found.append(
                ((*r_path, "at"), f"{raw_at} is before the previous read at {_iso(previous)}")
            )
        previous = at if previous is None else max(previous, at)
        times.reads[r] = at
        returned = read.get("returned")
        for i, turn_id in enumerate(returned if isinstance(returned, list) else ()):
            if not isinstance(turn_id, str):
                continue
            said = turn_at.get(turn_id)
            if turn_id not in seen["turn"]:
                found.append(((*r_path, "returned", i), f"unknown turn id {turn_id!r}"))
            elif said is not None and said > at:
                found.append(
                    (
                        (*r_path, "returned", i),
                        f"turn {turn_id!r} is said at {_iso(said)}, after the read at {raw_at}",
                    )
                )
    return found


def _build(data: Mapping[str, Any], source: str, times: _TimeResolver) -> Conversation:
    sessions = tuple(
        SessionRecord(
            id=session["id"],
            started_at=times.sessions[s],
            turns=tuple(
                Turn(
                    id=turn["id"],
                    speaker=turn["speaker"],
                    text=turn["text"],
                    at=times.turns[(s, t)],
                )
                for t, turn in enumerate(session["turns"])
            ),
        )
        for s, session in enumerate(data["sessions"])
    )
    facts = tuple(
        KeyFact(
            id=fact["id"],
            fact=fact["fact"],
            evidence=tuple(fact["evidence"]),
            probe=fact["probe"],
            expect=cast(Expect, fact.get("expect", "recalled")),
        )
        for fact in data["key_facts"]
    )
    reads = None
    if "reads" in data:
        reads = tuple(
            RecordedRead(
                id=read["id"],
                at=times.reads[r],
                session=read.get("session"),
                query=read["query"],
                top_k=int(read["top_k"]),
                returned=tuple(read["returned"]),
                reinforce=read.get("reinforce", True),
            )
            for r, read in enumerate(data["reads"])
        )
    return Conversation(
        id=data["id"],
        title=data.get("title", ""),
        description=data.get("description", ""),
        sessions=sessions,
        key_facts=facts,
        source=source,
        reads=reads,
    )


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def render_path(path: JsonPath) -> str:
    """``("sessions", 0, "id")`` -> ``$.sessions[0].id``."""
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out


def _path_key(path: JsonPath) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in path)
