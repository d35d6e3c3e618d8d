"""The context graph's store: every version of every node and edge, and the indexes that
keep a turn's work proportional to what the turn touches (never a scan of all nodes).

Writes go through ``put_node`` / ``put_edge`` (``TaskContext`` in ``update`` decides
what to write); each appends a version to the log, so ``as_of(t)`` rebuilds the graph as
it stood at any time and ``to_records`` / ``from_records`` round-trip it as plain dicts
(another part persists them). Thread-safe: one re-entrant lock around every write and
every read that walks several nodes.

A graph may span several sessions of its user (the agent keeps one per user): every
version remembers the session whose turn wrote it (``writing``), so a session can be taken
out again (``without_session``: a purge or an erasure) and a view can say which session
set a value and which one changed it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from memory_core.context.model import (
    Edge,
    EdgeType,
    Node,
    NodeType,
    edge_from_record,
    edge_record,
    node_from_record,
    node_id,
    node_record,
)
from memory_core.context.query import Query
from memory_core.errors import InputError, NotFoundError

_WORD = re.compile(r"[a-z0-9]+")


class ContextGraph:
    """The task context graph of one user (one conversation)."""

    __slots__ = (
        "_by_turn",
        "_by_type",
        "_by_word",
        "_edges",
        "_in",
        "_lock",
        "_log",
        "_nodes",
        "_origins",
        "_out",
        "_slot_active",
        "_writer",
        "_writers",
        "user",
        "user_id",
    )

    def __init__(self, user: str = "user") -> None:
        if not user.strip():
            raise InputError("user", "must be a non-empty id")
        self.user = user
        self.user_id = node_id(user, None, NodeType.USER, user)
        self._nodes: dict[str, list[Node]] = {}
        self._edges: dict[str, list[Edge]] = {}
        self._log: list[Node | Edge] = []
        self._writers: list[str | None] = []
        """The session whose turn wrote each version of ``_log`` (None: not known)."""
        self._writer: str | None = None
        self._origins: dict[str, str | None] = {}
        """Node or edge id -> the session that wrote its first version."""
        self._by_type: dict[NodeType, dict[str, None]] = {t: {} for t in NodeType}
        self._out: dict[str, dict[str, None]] = {}
        self._in: dict[str, dict[str, None]] = {}
        self._slot_active: dict[tuple[str, str], str] = {}
        self._by_turn: dict[int, dict[str, None]] = {}
        self._by_word: dict[str, dict[str, None]] = {}
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    # -- reading -----------------------------------------------------------------------
    def query(
        self, *, include_deprecated: bool = False, include_soft_deleted: bool = False
    ) -> Query:
        """The seed's chain: ``query().match_node(...).follow_edge(...).get_nodes(...)``."""
        return Query(
            self, include_deprecated=include_deprecated, include_soft_deleted=include_soft_deleted
        )

    def __contains__(self, ident: object) -> bool:
        return ident in self._nodes or ident in self._edges

    def __len__(self) -> int:
        return len(self._nodes)

    def node(self, ident: str) -> Node:
        try:
            return self._nodes[ident][-1]
        except KeyError:
            raise NotFoundError("context node", ident) from None

    def edge(self, ident: str) -> Edge:
        try:
            return self._edges[ident][-1]
        except KeyError:
            raise NotFoundError("context edge", ident) from None

    def versions(self, ident: str) -> tuple[Node, ...] | tuple[Edge, ...]:
        """Every version of a node or edge, oldest first (the audit trail)."""
        if ident in self._nodes:
            return tuple(self._nodes[ident])
        if ident in self._edges:
            return tuple(self._edges[ident])
        raise NotFoundError("context node or edge", ident)

    def nodes(
        self,
        type_: NodeType | str | None = None,
        *,
        include_deprecated: bool = False,
        include_soft_deleted: bool = False,
    ) -> list[Node]:
        """Current versions, oldest first; deprecated and soft-deleted left out unless asked."""
        with self._lock:
            ids: Iterable[str] = (
                self._by_type[NodeType(type_)] if type_ is not None else self._nodes
            )
            found = [self._nodes[i][-1] for i in ids]
        return [n for n in found if _visible(n, include_deprecated, include_soft_deleted)]

    def edges(
        self,
        type_: EdgeType | str | None = None,
        *,
        include_deprecated: bool = False,
        include_soft_deleted: bool = False,
    ) -> list[Edge]:
        with self._lock:
            found = [versions[-1] for versions in self._edges.values()]
        wanted = EdgeType(type_) if type_ is not None else None
        return [
            e
            for e in found
            if (wanted is None or e.type is wanted)
            and _visible(e, include_deprecated, include_soft_deleted)
        ]

    def out_edges(self, ident: str, type_: EdgeType | None = None) -> list[Edge]:
        with self._lock:
            found = [self._edges[e][-1] for e in self._out.get(ident, ())]
        return [e for e in found if type_ is None or e.type is type_]

    def in_edges(self, ident: str, type_: EdgeType | None = None) -> list[Edge]:
        with self._lock:
            found = [self._edges[e][-1] for e in self._in.get(ident, ())]
        return [e for e in found if type_ is None or e.type is type_]

    def active_for_slot(self, subject: str, slot: str) -> Node | None:
        """The constraint in force for a subject's slot (dict lookup)."""
        ident = self._slot_active.get((subject, slot))
        return self._nodes[ident][-1] if ident is not None else None

    def active_slots(self, subject: str | None = None) -> list[tuple[str, str, Node]]:
        """``(subject, slot, constraint)`` for every slot with a constraint in force."""
        with self._lock:
            return [
                (s, slot, self._nodes[i][-1])
                for (s, slot), i in self._slot_active.items()
                if subject is None or s == subject
            ]

    def created_at_turn(self, turn: int) -> list[Node]:
        """Nodes first made by that turn."""
        return [self._nodes[i][-1] for i in self._by_turn.get(turn, ())]

    def mentioning(self, words: str) -> list[Node]:
        """Nodes whose label or slot has every word of ``words`` (index lookup)."""
        keys = _WORD.findall(words.lower())
        if not keys:
            return []
        with self._lock:
            sets = [self._by_word.get(k, {}) for k in keys]
            first, *rest = sorted(sets, key=len)
            ids = [i for i in first if all(i in s for s in rest)]
            return [self._nodes[i][-1] for i in ids]

    def sessions(self) -> list[str]:
        """The sessions whose turns wrote into this graph, in the order they first did."""
        with self._lock:
            return list(dict.fromkeys(w for w in self._writers if w is not None))

    def origin(self, ident: str) -> str | None:
        """The session whose turn first made the node or edge (whose words it holds)."""
        try:
            return self._origins[ident]
        except KeyError:
            raise NotFoundError("context node or edge", ident) from None

    # -- writing -----------------------------------------------------------------------
    @contextmanager
    def writing(self, session: str | None) -> Iterator[None]:
        """Every version written inside is marked as written by ``session``'s turn."""
        with self._lock:
            before, self._writer = self._writer, session
            try:
                yield
            finally:
                self._writer = before

    def put_node(self, node: Node) -> Node:
        """Store a node's next version (or its first); returns it."""
        with self._lock:
            versions = self._nodes.get(node.id)
            if versions is None:
                self._nodes[node.id] = [node]
                self._origins[node.id] = self._writer
                self._by_type[node.type][node.id] = None
                for turn in node.turns[:1]:
                    self._by_turn.setdefault(turn, {})[node.id] = None
            else:
                versions.append(node)
            self._index_words(node)
            self._index_slot(node)
            self._log.append(node)
            self._writers.append(self._writer)
        return node

    def put_edge(self, edge: Edge) -> Edge:
        with self._lock:
            if edge.source not in self._nodes or edge.target not in self._nodes:
                raise NotFoundError(
                    "context node", edge.source if edge.source not in self._nodes else edge.target
                )
            versions = self._edges.get(edge.id)
            if versions is None:
                self._edges[edge.id] = [edge]
                self._origins[edge.id] = self._writer
                self._out.setdefault(edge.source, {})[edge.id] = None
                self._in.setdefault(edge.target, {})[edge.id] = None
            else:
                versions.append(edge)
            self._log.append(edge)
            self._writers.append(self._writer)
        return edge

    def log_size(self) -> int:
        """How many versions were written so far: ``written_since`` reads a step's writes."""
        with self._lock:
            return len(self._log)

    def written_since(self, start: int) -> tuple[Node | Edge, ...]:
        """The versions written after ``log_size()`` returned ``start``, in order."""
        with self._lock:
            return tuple(self._log[start:])

    def revert(self, written: Sequence[Node | Edge], at: float) -> bool:
        """Undo one step's writes (``written``: the versions it stored, ``written_since``) by
        writing new versions: each node and edge back as it stood before the step, one the
        step created withdrawn (soft-deleted, kept for audit).

        All or nothing: when a later write changed one of them (the conversation moved on
        since), putting the step's side back would leave two values in force for one slot,
        so nothing is written and the answer is False.
        """
        with self._lock:
            last: dict[str, Node | Edge] = {}
            first: dict[str, Node | Edge] = {}
            for item in written:
                first.setdefault(item.id, item)
                last[item.id] = item
            history = {ident: self._history(ident) for ident in last}
            if any(history[ident][-1] is not item for ident, item in last.items()):
                return False
            for ident, versions in history.items():
                current = versions[-1]
                at_step = next(i for i, v in enumerate(versions) if v is first[ident])
                before = versions[at_step - 1] if at_step else replace(current, soft_deleted=True)
                back = replace(before, version=current.version + 1, recorded_at=at)
                if isinstance(back, Node):
                    self.put_node(back)
                else:
                    self.put_edge(back)
            return True

    def _history(self, ident: str) -> list[Node] | list[Edge]:
        versions = self._nodes.get(ident)
        return versions if versions is not None else self._edges[ident]

    def _index_words(self, node: Node) -> None:
        text = " ".join(str(v) for v in (node.label, node.attr("slot")) if v)
        for word in _WORD.findall(text.lower()):
            self._by_word.setdefault(word, {})[node.id] = None

    def _index_slot(self, node: Node) -> None:
        if node.type is not NodeType.CONSTRAINT:
            return
        key = (str(node.attr("subject")), str(node.attr("slot")))
        if node.active:
            self._slot_active[key] = node.id
        elif self._slot_active.get(key) == node.id:
            del self._slot_active[key]

    # -- time travel and records -------------------------------------------------------
    def as_of(self, at: float) -> ContextGraph:
        """The graph as it stood at time ``at``: every version recorded by then."""
        with self._lock:
            log = [
                (item, writer)
                for item, writer in zip(self._log, self._writers, strict=True)
                if item.recorded_at <= at
            ]
        return _replayed(self.user, log)

    def to_records(self) -> list[dict[str, Any]]:
        """Every version, in the order written, as plain dicts (``record``: node or edge;
        ``session``: the session that wrote it, when known)."""
        with self._lock:
            return [
                {
                    **(
                        {"record": "node", **node_record(i)}
                        if isinstance(i, Node)
                        else {"record": "edge", **edge_record(i)}
                    ),
                    **({"session": w} if w is not None else {}),
                }
                for i, w in zip(self._log, self._writers, strict=True)
            ]

    @classmethod
    def from_records(
        cls, records: Iterable[dict[str, Any]], user: str = "user", *, partial: bool = False
    ) -> ContextGraph:
        """Rebuild a graph from ``to_records`` output (validated: a bad record names itself).
        ``partial``: the records lost some versions to an erasure, so an edge whose node is
        gone is left out instead of refused."""
        log: list[tuple[Node | Edge, str | None]] = []
        for index, record in enumerate(records):
            try:
                kind = record["record"]
                item = node_from_record(record) if kind == "node" else edge_from_record(record)
                writer = record.get("session")
                if writer is not None and not isinstance(writer, str):
                    raise TypeError(f"session must be a string, got {writer!r}")
            except (KeyError, ValueError, TypeError) as exc:
                raise InputError(
                    f"records[{index}]", f"not a context graph record ({exc})"
                ) from exc
            log.append((item, writer))
        return _replayed(user, log, partial=partial)

    def without_session(self, session: str) -> ContextGraph:
        """The graph as if ``session`` had said nothing: what its turns wrote is gone (a
        value it changed is back as it was), every node and edge it first made is gone with
        all its versions (later versions copy its words), its turns and memories leave the
        provenance of what stays, and edges left without an end go too."""
        return ContextGraph.from_records(
            records_without_session(self.to_records(), session), self.user, partial=True
        )


Provenance = tuple[str, str | None, Sequence[int], Sequence[str]]
"""One version's provenance: node or edge id, writing session, turns, memory ids."""


def session_additions(
    versions: Iterable[Provenance], session: str
) -> tuple[frozenset[int], frozenset[str]]:
    """The turns and memory ids ``session``'s versions added to their node's or edge's
    provenance (``versions`` in log order): what later versions of other sessions copy,
    and what leaves them when the session is erased (here and in the store's rows)."""
    seen: dict[str, tuple[set[int], set[str]]] = {}
    turns: set[int] = set()
    memories: set[str] = set()
    for ident, writer, its_turns, its_memories in versions:
        before_turns, before_memories = seen.get(ident, (set(), set()))
        now_turns, now_memories = set(its_turns), set(its_memories)
        if writer == session:
            turns |= now_turns - before_turns
            memories |= now_memories - before_memories
        seen[ident] = (now_turns, now_memories)
    return frozenset(turns), frozenset(memories)


def records_without_session(
    records: Sequence[dict[str, Any]], session: str
) -> list[dict[str, Any]]:
    """``to_records`` output without what ``session`` wrote or first made (see
    ``ContextGraph.without_session``); the store applies the same rule to its rows."""
    origin: dict[str, str | None] = {}
    for record in records:
        origin.setdefault(str(record["id"]), record.get("session"))
    its_turns, its_memories = session_additions(
        (
            (str(r["id"]), r.get("session"), r.get("turns", ()), r.get("memories", ()))
            for r in records
        ),
        session,
    )
    kept = []
    for record in records:
        if record.get("session") == session or origin[str(record["id"])] == session:
            continue
        kept.append(
            {
                **record,
                "turns": [t for t in record.get("turns", ()) if t not in its_turns],
                "memories": [m for m in record.get("memories", ()) if m not in its_memories],
            }
        )
    return kept


def _replayed(
    user: str, log: Iterable[tuple[Node | Edge, str | None]], *, partial: bool = False
) -> ContextGraph:
    graph = ContextGraph(user)
    for item, writer in log:
        graph._writer = writer
        if isinstance(item, Node):
            graph.put_node(item)
        elif not partial or (item.source in graph._nodes and item.target in graph._nodes):
            graph.put_edge(item)
    graph._writer = None
    return graph


def _visible(item: Node | Edge, deprecated: bool, soft_deleted: bool) -> bool:
    return (deprecated or not item.deprecated) and (soft_deleted or not item.soft_deleted)
