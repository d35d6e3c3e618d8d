"""A typed view of ``st.session_state``: one place names every per-browser-session value.

Works over any mutable mapping, so it is unit-tested with a plain dict. Widget keys
are listed here too, because Streamlit stores widget values under them.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from memory_core.dashboard.filters import NodeFilter
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryKind, RetrievalHit

if TYPE_CHECKING:
    from memory_core.context.graph import ContextGraph


class AtlasSource(StrEnum):
    LIVE = "live"
    FOLLOW = "follow"
    RECORDED = "recorded"
    SNAPSHOT = "snapshot"


SOURCE_LABELS = {
    AtlasSource.LIVE: "Live (in-process)",
    AtlasSource.FOLLOW: "Live: follow a recording agent",
    AtlasSource.RECORDED: "Recorded (database)",
    AtlasSource.SNAPSHOT: "Snapshot file",
}


class Keys:
    """Session-state keys (widgets write their values under these)."""

    SOURCE = "atlas_source"
    SESSIONS = "filter_sessions"
    KINDS = "filter_kinds"
    MIN_WEIGHT = "filter_min_weight"
    TEXT = "filter_text"
    LOADED = "loaded_atlas"
    CHAT = "playground_chat"
    HITS = "playground_hits"
    PLAY_SESSION = "playground_session"
    SELECTED = "inspector_node"
    EVICTION_PAGE = "eviction_page"
    FOLLOW_ATLAS = "follow_atlas"
    FOLLOW_EVERY = "follow_every"
    FOLLOWED = "follow_seen"


@dataclass(frozen=True, slots=True)
class LoadedAtlas:
    """A recorded or uploaded atlas held by one browser session."""

    atlas: ElasticMemoryAtlas
    label: str
    source: AtlasSource
    graphs: Mapping[str, ContextGraph] = field(default_factory=dict)
    """The task context graphs saved in the snapshot, by session."""


@dataclass(frozen=True, slots=True)
class ChatEntry:
    role: str
    text: str


class DashboardState:
    """Typed accessors over a session-state mapping."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._s = store

    @property
    def source(self) -> AtlasSource:
        return AtlasSource(self._s.get(Keys.SOURCE, AtlasSource.LIVE))

    @property
    def node_filter(self) -> NodeFilter:
        """The sidebar's shared filters (unknown kinds from an old session are dropped)."""
        kinds = tuple(
            MemoryKind(k)
            for k in self._s.get(Keys.KINDS, ())
            if k in MemoryKind.__members__.values()
        )
        return NodeFilter(
            sessions=tuple(self._s.get(Keys.SESSIONS, ())),
            kinds=kinds,
            min_weight=float(self._s.get(Keys.MIN_WEIGHT, 0.0)),
            text=str(self._s.get(Keys.TEXT, "")),
        )

    @property
    def loaded(self) -> LoadedAtlas | None:
        value = self._s.get(Keys.LOADED)
        return value if isinstance(value, LoadedAtlas) else None

    @loaded.setter
    def loaded(self, value: LoadedAtlas | None) -> None:
        self._s[Keys.LOADED] = value

    @property
    def chat(self) -> list[ChatEntry]:
        return list(self._s.get(Keys.CHAT, []))

    def add_chat(self, role: str, text: str) -> None:
        self._s[Keys.CHAT] = [*self.chat, ChatEntry(role, text)]

    @property
    def hits(self) -> list[RetrievalHit]:
        return list(self._s.get(Keys.HITS, []))

    @hits.setter
    def hits(self, value: list[RetrievalHit]) -> None:
        self._s[Keys.HITS] = list(value)

    @property
    def highlight(self) -> dict[str, float]:
        """Retrieved node id -> score, for ringing them in the graph."""
        return {h.node.id: h.score for h in self.hits}

    @property
    def playground_session(self) -> str:
        return str(self._s.get(Keys.PLAY_SESSION, "playground"))  # blank is refused, not replaced

    @property
    def eviction_page(self) -> int:
        return int(self._s.get(Keys.EVICTION_PAGE, 0))

    @eviction_page.setter
    def eviction_page(self, value: int) -> None:
        self._s[Keys.EVICTION_PAGE] = max(0, int(value))
