"""Following a recording agent (``atlas mcp --record``): which atlas, how fresh, what changed.

The sidebar polls ``memory_core.store.watch.head`` every couple of seconds; when the
head's version moved (new events or a new checkpoint) the shared
``memory_core.store.follow.AtlasFollower`` applies the new events to its copy and the
pages are rerun. Pure functions over plain values, so the polling logic is tested
without Streamlit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from memory_core.engine import validate as check
from memory_core.engine.events import (
    EVENT_TYPES,
    AtlasEvent,
    ConfigChanged,
    DecayApplied,
    MemoryPressure,
    SessionEnded,
)
from memory_core.store.base import utcnow
from memory_core.store.event_filter import EventFilter
from memory_core.store.follow import decode
from memory_core.store.watch import Head, RecordedAtlas, head

if TYPE_CHECKING:
    from memory_core.store.engine import Database
    from memory_core.store.records import StoredEvent
    from memory_core.store.repositories import EventRepository

DEFAULT_EVERY = 1.0
"""Seconds between two checks of the followed atlas (one indexed query; the new events
are read only when there are some)."""
EVERY_RANGE = (0.5, 60.0)
DECAY_LIMIT = 500
"""Newest decay passes read for the weights chart, so a long recording stays cheap."""
NODE_EVENT_LIMIT = 200
"""Newest events of one memory read for the inspector."""
_NODE_EVENTS: dict[str, type[AtlasEvent]] = {
    t: c
    for t, c in EVENT_TYPES.items()
    if c not in (DecayApplied, SessionEnded, MemoryPressure, ConfigChanged)  # atlas-wide
}


@dataclass(frozen=True, slots=True)
class Followed:
    """What one browser session last saw of the atlas it follows."""

    atlas_id: str
    name: str
    head: Head

    @property
    def label(self) -> str:
        return f"followed agent {self.name} · {self.atlas_id[:8]}"


def check_every(seconds: float) -> float:
    """Seconds between two polls, within ``EVERY_RANGE``."""
    return check.in_range(seconds, "check_every", *EVERY_RANGE)


def poll(db: Database, atlas_id: str, name: str, seen: Followed | None) -> tuple[Followed, bool]:
    """The atlas's head now, and whether it differs from what ``seen`` showed."""
    now = Followed(atlas_id, name, head(db, atlas_id))
    changed = seen is None or seen.atlas_id != atlas_id or seen.head.version != now.head.version
    return now, changed


def recorded_decays(
    events: EventRepository, atlas_id: str, *, limit: int = DECAY_LIMIT
) -> list[DecayApplied]:
    """The agent's newest ``limit`` recorded decay passes, oldest first, shaped like the
    event buffer's. Their per-node weights were stored as weight samples, not in the
    payload, so ``weights`` is empty and the chart shows min/mean/max only."""
    page = events.query(
        EventFilter(atlas_id=atlas_id, types=(DecayApplied.type,)), limit=limit, descending=True
    )
    return [
        DecayApplied(
            at=e.at.timestamp(),
            session_id=e.session_id,
            strategy=str(e.payload["strategy"]),
            nodes=int(e.payload["nodes"]),
            mean_weight=float(e.payload["mean_weight"]),
            min_weight=float(e.payload["min_weight"]),
            max_weight=float(e.payload["max_weight"]),
        )
        for e in reversed(page.items)
    ]


def recorded_node_events(
    events: EventRepository, atlas_id: str, node_id: str, *, limit: int = NODE_EVENT_LIMIT
) -> list[AtlasEvent]:
    """The newest ``limit`` recorded events of one memory, oldest first, shaped like the
    event buffer's ``for_node``: its own events, and the decay passes that sampled it."""
    page = events.query(EventFilter(atlas_id=atlas_id, node_id=node_id), limit=limit)
    own = [ev for e in page.items if (ev := _decoded(e)) is not None]
    sampled = {
        p.at.timestamp(): p.weight
        for p in events.weight_history(node_id, atlas_id=atlas_id)
        if p.source == DecayApplied.type
    }
    decays = [
        dataclasses.replace(d, weights={node_id: sampled[d.at]})
        for d in recorded_decays(events, atlas_id, limit=limit)
        if d.at in sampled
    ]
    return sorted([*own, *decays], key=lambda e: e.at)[-limit:]


def _decoded(stored: StoredEvent) -> AtlasEvent | None:
    """A logged node event rebuilt as the engine published it (text redacted by the
    privacy policy comes back empty); None for other types or a payload cut short."""
    return decode(stored) if stored.type in _NODE_EVENTS else None


def status_text(current: Head, now: datetime | None = None, *, applied: int | None = None) -> str:
    """``live · up to date``, ``live · updated 3 s ago``, ``recording stopped · …`` or
    why nothing comes. ``applied``: events the follower's copy holds (None: snapshots only)."""
    now = now or utcnow()
    if current.snapshot_at is None:
        return "waiting for the first snapshot"
    age = _ago(now - current.snapshot_at)
    if current.stopped:
        return f"recording stopped · last snapshot {age} ago"
    if not current.live(now):
        return f"recorder silent · last snapshot {age} ago"
    if applied is not None and current.last_seq is not None:
        behind = current.last_seq - applied
        return "live · up to date" if behind <= 0 else f"live · {behind} events to apply"
    return f"live · updated {age} ago"


def atlas_label(atlas: RecordedAtlas, now: datetime | None = None) -> str:
    """One line for the picker: state, name, id, events and the last snapshot's time."""
    mark = "● live" if atlas.live(now) else "○ stopped"
    return (
        f"{mark} · {atlas.name} · {atlas.id[:8]} · {atlas.events} events · "
        f"snapshot {atlas.snapshot_at.astimezone():%H:%M:%S}"
    )


def _ago(delta: timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"
