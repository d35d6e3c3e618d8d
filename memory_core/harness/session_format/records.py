"""The records of an ``atlas-session/1`` conversation, and how they are written back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from memory_core.errors import NotFoundError

FORMAT = "atlas-session/1"

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
                "started_at": iso(session.started_at),
                "turns": [
                    {"id": t.id, "speaker": t.speaker, "text": t.text, "at": iso(t.at)}
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
    item: dict[str, Any] = {"id": read.id, "at": iso(read.at)}
    if read.session is not None:
        item["session"] = read.session
    item |= {"query": read.query, "top_k": read.top_k, "returned": list(read.returned)}
    if not read.reinforce:
        item["reinforce"] = False
    return item


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()
