"""A recorded atlas (``atlas mcp --record``) to ``atlas-session/1`` with the agent's reads.

Every write the agent made becomes a turn at its recorded time: a new memory (``added``) or
a write folded into a near-duplicate (``merged``). The speaker is the memory's
``metadata["speaker"]`` (from its eviction event or the newest snapshot; writes carry no
metadata), else ``user``; the ``"Speaker: "`` the atlas put in front of the text is taken
off again, so a replay stores the same text. Consecutive writes to one session form a
session; a session the agent comes back to after writing elsewhere continues as
``<session>-2``, ``-3``, ... (the format's sessions do not interleave).

Every ``read`` event becomes a recorded read at its time, with the query, ``top_k``, scope
and reinforcement the agent used and, as ``returned``, the turns that created the memories
it got back. A memory no write of the recording created (a session summary, a memory from
before the recording) is left out of ``returned``; the description counts them. Key facts
are empty: they are marked later.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_core.errors import InputError, NotFoundError
from memory_core.harness.importers.base import (
    ImportedConversation,
    ImportOptions,
    Source,
    atlas_id,
    conversation,
    iso,
)
from memory_core.harness.session_format import is_id, is_speaker

if TYPE_CHECKING:  # the store pulls in SQLAlchemy: loaded only when a recording is imported
    from memory_core.store.engine import Database
    from memory_core.store.records import AtlasInfo, StoredEvent
    from memory_core.store.repositories import Store

ADDED, MERGED, EVICTED, READ = "added", "merged", "evicted", "read"
DEFAULT_SPEAKER = "user"
SEPARATOR = ": "  # memory_core.agent.attribution puts "Speaker: " in front of the text


def import_source(source: Source, options: ImportOptions) -> list[ImportedConversation]:
    """Open the recording database (which must exist) and import the atlas it names."""
    db = open_recordings(source.database)
    try:
        return [import_recording(db, source.atlas)]
    finally:
        db.close()


def open_recordings(url: str | None) -> Database:
    """The database ``atlas mcp --record`` wrote; a SQLite file that does not exist is an error
    (opening would create an empty one)."""
    from memory_core.store.engine import open_database, resolve_url

    resolved = resolve_url(url)
    database = resolved.database or ""
    if resolved.get_backend_name() == "sqlite" and not Path(database).expanduser().exists():
        raise InputError(
            "database",
            f"{database} does not exist; give the database `atlas mcp --record` wrote to "
            "(its --database, else ATLAS_DATABASE_URL or data/atlas.db)",
        )
    return open_database(resolved.render_as_string(hide_password=False))


def import_recording(store: Store, atlas: str) -> ImportedConversation:
    """The recorded atlas ``atlas`` (its id, or a name only one atlas has) as a conversation."""
    from memory_core.store.recording import recorded_metadata

    info = find_atlas(store, atlas)
    events = list(_events(store, info.id))
    metadata = recorded_metadata(store.snapshots, info.id)
    for event in events:
        meta = event.payload.get("metadata")
        if event.type == EVICTED and event.node_id and isinstance(meta, dict):
            metadata.setdefault(event.node_id, meta)
    draft = _Draft(metadata)
    for event in events:
        _STEPS[event.type](draft, event)
    if not draft.sessions:
        raise InputError("atlas", f"{info.id} ({info.name}) has no recorded writes to replay")
    description = (
        f"Recorded by atlas mcp --record as {info.name!r} ({info.id}): {draft.writes} writes "
        f"({draft.merged} merged into earlier memories), {len(draft.reads)} reads"
    )
    if draft.untraced:
        description += (
            f"; {draft.untraced} memories returned by reads were not created by a recorded "
            "write (summaries, older memories) and are left out of them"
        )
    data = conversation(
        conv_id=atlas_id("recording", info.name, info.id[:8]),
        title=f"Recording of {info.name}",
        description=description,
        sessions=[{k: v for k, v in s.items() if k != "recorded"} for s in draft.sessions],
        facts=[],
    )
    data["reads"] = draft.reads
    return ImportedConversation(data=data, source=f"recording {info.id}")


def find_atlas(store: Store, atlas: str) -> AtlasInfo:
    """By id, else by name when exactly one atlas has it; the error lists what there is."""
    try:
        return store.atlases.get(atlas)
    except NotFoundError:
        pass
    known = store.atlases.list()
    named = [a for a in known if a.name == atlas]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(f"{a.id} ({a.name})" for a in known[:10]) or "none"
    problem = "names several atlases; give the id" if named else "is neither an atlas id nor name"
    raise InputError("atlas", f"{atlas!r} {problem}; recorded atlases: {listed}")


def _events(store: Store, atlas: str) -> Iterator[StoredEvent]:
    """Writes, reads and evictions of one atlas, oldest first (ties in logged order)."""
    from memory_core.store.records import MAX_PAGE, EventFilter

    flt = EventFilter(atlas_id=atlas, types=(ADDED, MERGED, EVICTED, READ))
    offset = 0
    while True:
        page = store.events.query(
            flt, offset=offset, limit=MAX_PAGE, order_by="at", descending=False
        )
        yield from page.items
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return


@dataclass(slots=True)
class _Draft:
    """The conversation as it is built, event by event."""

    metadata: dict[str, dict[str, Any]]
    sessions: list[dict[str, Any]] = field(default_factory=list)
    reads: list[dict[str, Any]] = field(default_factory=list)
    turn_of: dict[str, str] = field(default_factory=dict)  # memory id -> the turn creating it
    runs: dict[str, list[str]] = field(default_factory=dict)  # recorded session -> session ids
    writes: int = 0
    merged: int = 0
    untraced: int = 0

    def write(self, event: StoredEvent, text: str | None, node_id: str | None) -> str:
        """Add a turn for one write; returns its id."""
        if text is None:
            raise _no_text(event)
        session = self._session(event)
        speaker = self._speaker(node_id, text)
        if text.startswith(speaker + SEPARATOR) and text[len(speaker) + 2 :].strip():
            text = text[len(speaker) + 2 :]
        self.writes += 1
        turn_id = f"{session['id']}-t{len(session['turns']) + 1}"
        at = iso(event.at)
        session["turns"].append({"id": turn_id, "speaker": speaker, "text": text, "at": at})
        return turn_id

    def _session(self, event: StoredEvent) -> dict[str, Any]:
        recorded = event.session_id or "default"
        if self.sessions and self.sessions[-1]["recorded"] == recorded:
            return self.sessions[-1]
        runs = self.runs.setdefault(recorded, [])
        base = recorded if is_id(recorded) else atlas_id("session", recorded)
        runs.append(base if not runs else f"{base}-{len(runs) + 1}")
        session = {"id": runs[-1], "started_at": iso(event.at), "turns": [], "recorded": recorded}
        self.sessions.append(session)
        return session

    def _speaker(self, node_id: str | None, text: str) -> str:
        name = self.metadata.get(node_id or "", {}).get("speaker")
        if isinstance(name, str) and is_speaker(name.strip()):
            return name.strip()
        return DEFAULT_SPEAKER

    def scope(self, recorded: str | None) -> str | None:
        """The session id a read scoped to ``recorded`` now means (None: every session)."""
        runs = self.runs.get(recorded or "")
        return runs[-1] if runs else None


def _added(draft: _Draft, event: StoredEvent) -> None:
    turn_id = draft.write(event, event.content, event.node_id)
    if event.node_id:
        draft.turn_of[event.node_id] = turn_id


def _merged(draft: _Draft, event: StoredEvent) -> None:
    draft.merged += 1
    draft.write(event, event.content, event.node_id)  # the kept memory's speaker, if it says so


def _read(draft: _Draft, event: StoredEvent) -> None:
    if event.content is None:
        raise _no_text(event)
    payload = event.payload
    returned: list[str] = []
    for node_id in payload.get("returned", ()):
        turn_id = draft.turn_of.get(str(node_id))
        if turn_id is None:
            draft.untraced += 1
        elif turn_id not in returned:
            returned.append(turn_id)
    read: dict[str, Any] = {"id": f"r{len(draft.reads) + 1}", "at": iso(event.at)}
    scope = draft.scope(event.session_id)
    if scope is not None:
        read["session"] = scope
    read |= {"query": event.content, "top_k": int(payload["top_k"]), "returned": returned}
    if payload.get("reinforce") is False:
        read["reinforce"] = False
    draft.reads.append(read)


def _evicted(draft: _Draft, event: StoredEvent) -> None:
    """Only its metadata matters (read before the walk)."""


_STEPS = {ADDED: _added, MERGED: _merged, READ: _read, EVICTED: _evicted}


def _no_text(event: StoredEvent) -> InputError:
    return InputError(
        "atlas",
        f"{event.type} event {event.id} has no logged text: the atlas was recorded with "
        "log_content redacted or none, so its conversation cannot be rebuilt",
    )
