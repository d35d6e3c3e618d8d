"""OpenAI chat-messages logs to ``atlas-session/1``: one conversation per ``.json`` file or per
``.jsonl`` line, ``{"messages": [{"role", "content", "name"?, "timestamp"?}], "id"?, "metadata"?}``.

Sessions follow an explicit ``session`` field when messages carry one, else a silence of at
least ``session_gap`` between two timed messages. System, developer and tool messages are the
agent's plumbing, not what the user said: left out unless asked for. Chat logs carry no key
facts; they are marked later (``key_facts`` is empty).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.harness.importers.base import (
    At,
    DraftSession,
    ImportedConversation,
    ImportOptions,
    atlas_id,
    chain_sessions,
    conversation,
    describe,
    iso,
)
from memory_core.harness.session_format import decode_json, read_text

SPOKEN_ROLES = frozenset({"user", "assistant"})
PLUMBING_ROLES = frozenset({"system", "developer", "tool", "function"})
TIME_FIELDS = ("timestamp", "created_at")
SESSION_FIELDS = ("session", "session_id")
# Where a log without any timestamp starts (a fixed moment keeps imports reproducible).
UNTIMED_START = datetime(2000, 1, 1, tzinfo=UTC)


def import_file(path: Path, options: ImportOptions) -> list[ImportedConversation]:
    source = str(path)
    text = read_text(path, source=source, max_bytes=options.max_bytes)
    if path.suffix.lower() == ".jsonl":
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if not lines:
            raise At(None, source).error("expected one JSON conversation per line, got no lines")
        return [
            _conversation(
                At(decode_json(line, f"{source}:{n}"), f"{source}:{n}"),
                f"{path.stem}-{n}",
                path.name,
                options,
            )
            for n, line in lines
        ]
    return [_conversation(At(decode_json(text, source), source), path.stem, path.name, options)]


def _conversation(
    conv: At, fallback_id: str, file_name: str, options: ImportOptions
) -> ImportedConversation:
    if not isinstance(conv.value, dict):
        raise conv.error(
            f'expected a conversation {{"messages": [...]}}, got {describe(conv.value)}'
        )
    given_id = conv.opt("id")
    conv_id = atlas_id(given_id.scalar_text() if given_id is not None else fallback_id)
    metadata = conv.opt("metadata")
    if metadata is not None:
        metadata.fields()  # raises unless an object
    title_at = metadata.opt("title") if metadata is not None else None
    messages_at = conv.get("messages")
    messages = messages_at.items()
    if not messages:
        raise messages_at.error("expected at least one message")

    kept: list[tuple[At, dict[str, Any], datetime | None, str | None]] = []
    skipped = 0
    any_session = False
    session: str | None = None  # a message without the field stays in the current session
    last_time: datetime | None = None
    for message in messages:
        role = message.get("role").text()
        if role not in SPOKEN_ROLES | PLUMBING_ROLES:
            raise message.get("role").error(
                f"expected a role among {sorted(SPOKEN_ROLES | PLUMBING_ROLES)}, got {role!r}"
            )
        moment = _time(message)
        if moment is not None:
            if last_time is not None and moment < last_time:
                raise message.get(_time_field(message)).error(
                    f"{iso(moment)} is before the previous message's time {iso(last_time)}; "
                    "messages must be in the order they were said"
                )
            last_time = moment
        key = _session_key(message)
        any_session = any_session or key is not None
        session = key if key is not None else session
        content = _content(message.get("content"))
        if (role in PLUMBING_ROLES and not options.include_system) or not content.strip():
            skipped += 1
            continue
        name = message.opt("name")
        speaker = name.speaker() if name is not None else message.get("role").speaker()
        kept.append((message, {"speaker": speaker, "text": content}, moment, session))
    if not kept:
        raise messages_at.error(
            "expected at least one user or assistant message with text "
            "(system and tool messages are left out unless --include-system)"
        )
    drafts = _sessions(kept, any_session, options.session_gap, _time(conv))
    return ImportedConversation(
        data=conversation(
            conv_id=conv_id,
            title=title_at.text() if title_at is not None else f"Chat {conv_id}",
            description=f"Imported from {file_name} (openai-chat)",
            sessions=chain_sessions(drafts),
            facts=[],
        ),
        source=conv.source,
        skipped_messages=skipped,
    )


def _sessions(
    kept: list[tuple[At, dict[str, Any], datetime | None, str | None]],
    by_field: bool,
    gap: float,
    start: datetime | None,
) -> list[DraftSession]:
    """Split at a change of the session field, else at a silence of ``gap`` seconds or more.

    An untimed message among timed ones is given the time of the message before it (the
    first ones: of the first timed message), so time never runs backwards. A log with no
    time at all keeps the format's default of 30 s between turns, from the conversation's
    own ``timestamp`` or ``created_at`` if it has one, else from ``UNTIMED_START``.
    """
    moments = [moment for _, _, moment, _ in kept]
    timed = next((m for m in moments if m is not None), None)
    filled: list[datetime | None] = []
    for moment in moments:
        timed = moment if moment is not None else timed
        filled.append(timed)
    groups: list[list[int]] = []
    for i, (_, _, _, session) in enumerate(kept):
        if not i:
            split = True
        elif by_field:
            split = session != kept[i - 1][3]
        else:
            before, now = filled[i - 1], filled[i]
            split = before is not None and now is not None and (now - before).total_seconds() >= gap
        if split:
            groups.append([])
        groups[-1].append(i)
    drafts = []
    for n, members in enumerate(groups, start=1):
        turns = []
        for m, i in enumerate(members, start=1):
            turn = {"id": f"s{n}-t{m}", **kept[i][1]}
            moment = filled[i]
            if moment is not None:
                turn["at"] = iso(moment)
            turns.append(turn)
        first = filled[members[0]] or start or UNTIMED_START
        drafts.append(DraftSession(start=first, turns=turns, date=kept[members[0]][0]))
    return drafts


def _time_field(obj: At) -> str:
    """The first of ``TIME_FIELDS`` that ``obj`` has (``""``: none)."""
    return next((k for k in TIME_FIELDS if obj.opt(k) is not None), "")


def _time(obj: At) -> datetime | None:
    """Epoch seconds or ISO-8601 (without a timezone: UTC); ``None`` when the object has none."""
    field = _time_field(obj)
    if not field:
        return None
    at = obj.get(field)
    value = at.value
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, UTC)
        if isinstance(value, str):
            moment = datetime.fromisoformat(value.strip())
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        pass
    raise at.error(
        f"expected seconds since the epoch or an ISO-8601 date and time "
        f"(e.g. 2024-07-21T09:00:00+00:00), got {describe(value)}"
    )


def _session_key(message: At) -> str | None:
    at = next((message.get(k) for k in SESSION_FIELDS if message.opt(k) is not None), None)
    return at.scalar_text() if at is not None else None


def _content(at: At) -> str:
    """A string, or the text parts of a list of content parts; ``null`` (a tool call) is empty."""
    if at.value is None or isinstance(at.value, str):
        return at.value or ""
    if not isinstance(at.value, list):
        raise at.error(
            f"expected a string, a list of content parts or null, got {describe(at.value)}"
        )
    parts = []
    for part in at.items():
        if not isinstance(part.value, dict):
            raise part.error(f"expected a content part object, got {describe(part.value)}")
        if part.opt("text") is not None:
            parts.append(part.get("text").string())
    return "\n".join(p for p in parts if p.strip())
