"""Turn facts into graph changes, keeping the graph consistent.

- A goal named by a turn is opened once (User HAS_GOAL Goal) and becomes the current one;
  the constraints of later turns SATISFY it and the entities it names are REFERENCED.
- A constraint for a slot that already has another value in force CONFLICTS_WITH it; the
  old one is deprecated (a new version, kept) and its SATISFIES edge invalidated, never
  deleted. The same value restated is the same node with one more turn of provenance.
- When the graph is unsure the new value is for that slot (slot names only similar, or a
  free choice named with low confidence), nothing changes: a ``PendingReview`` is returned
  for a person (the agent routes it to the conflicts review queue) when ``review_gate``
  finds it a pair a person would review; otherwise the change is dropped.
- "Forget what I said about X" soft-deletes X's nodes; "forget what I just said" the
  speaker's last change, and what that change had deprecated is in force again.
- A confirmation VALIDATES the constraints of the turn before.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from memory_core.context.extract import labels
from memory_core.context.extract.patterns import IDENTIFIER, number_of
from memory_core.context.extract.slots import (
    ASSISTANT,
    CHOICE,
    NUMBER,
    OTHER_PERSON,
    USER,
    SlotValue,
)
from memory_core.context.extract.turn import PHRASE_MEMORY, EntityMention, TurnFacts
from memory_core.context.graph import ContextGraph
from memory_core.context.model import (
    Edge,
    EdgeType,
    Node,
    NodeType,
    PendingReview,
    Scalar,
    edge_id,
    node_id,
    normalise,
)
from memory_core.context.review_gate import refusal
from memory_core.context.values import PRICES, comparable, family, holds
from memory_core.embedding.base import Embedder, embed_checked
from memory_core.embedding.phrase_twin import phrase_memory

GOAL_SWITCH_MARGIN = 0.1
"""A turn moves to another task only when it is this much nearer to it than to the current."""


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """How sure the graph must be before it replaces a value, and when it is too big."""

    same_slot_similarity: float = 0.8
    """Two differently named slots are one slot when their names are at least this close."""
    review_similarity: float = 0.6
    """Between this and ``same_slot_similarity``: unsure, the change goes to review."""
    choice_review_confidence: float = 0.6
    """A free choice named with less confidence than this does not replace a value."""
    related_topic_similarity: float = 0.4
    """An unsure change goes to a reviewer only when the two slots' topics ("hotel", "room")
    are at least this close (``review_gate``): "somewhat related". Set on topic pairs
    written for it, not on conversations: MiniLM puts related ones (hotel / room, flight /
    trip, order / package) at 0.2-0.9, median 0.56, and unrelated ones (hotel / knee, gym /
    beach, watch / feel) at 0.17-0.48, median 0.28 (``tests/integration/context/
    test_review_gate_real.py``)."""
    max_constraints: int = 7
    max_path_length: float = 3.0


@dataclass(frozen=True, slots=True)
class Health:
    """The seed's health check: too many constraints in force, or entities too far apart."""

    constraints: int
    mean_path_length: float
    fired: bool
    reason: str = ""


@dataclass(slots=True)
class Applied:
    """What one turn changed in the graph."""

    turn: int
    intent: str
    goal: str | None = None
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deprecated: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    """``(new, old)`` constraint ids."""
    pending: list[PendingReview] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    health: Health | None = None
    written: tuple[Node | Edge, ...] = ()
    """Every version a reviewer's answer stored (``TaskContext.resolve``): what ``undo``
    puts back."""


@dataclass(slots=True)
class _Change:
    turn: int
    speaker: str
    added: list[str]
    deprecated: list[str]
    constraints: list[str]


class TaskContext:
    """One conversation's graph and the rules that keep it consistent.

    Args:
        user: the user's id (part of every node id).
        embedder: compares slot names ("hotel budget" vs "hotel limit"), through its
            phrase twin when it is MiniLM (``embedding.phrase_twin.phrase_memory``); without
            one only identical slot names are one slot.
        settings: thresholds (the agent fills the health ones from ``AtlasConfig``).
    """

    def __init__(
        self,
        user: str = "user",
        *,
        embedder: Embedder | None = None,
        settings: ContextSettings | None = None,
    ) -> None:
        self.graph = ContextGraph(user)
        self.embedder = embedder
        self.settings = settings or ContextSettings()
        self.goal_id: str | None = None
        self._names = None if embedder is None else phrase_memory(embedder, PHRASE_MEMORY)
        self._slot_vectors: dict[str, np.ndarray] = {}
        self._turn_slots: tuple[str, ...] = ()
        """The slot names of the turn being applied: the first name it compares embeds them
        all, in one model call (a live turn comparing two new names made two or three)."""
        self._changes: deque[_Change] = deque(maxlen=64)
        self._offered: list[SlotValue] = []
        """The other side's values of the turn just before: a confirmation adopts them."""
        self._asked_change = False
        """The user's turn just before asked for a change: the reply reports what was set."""
        self._session: str | None = None
        """The session of the turn just before (the turn-to-turn memory is its)."""
        self._lock = threading.RLock()
        self.graph.put_node(
            Node(self.graph.user_id, NodeType.USER, user, normalise(user), recorded_at=0.0)
        )

    # -- one turn ----------------------------------------------------------------------
    def observe(
        self,
        facts: TurnFacts,
        *,
        turn: int,
        memory_id: str | None = None,
        session: str | None = None,
    ) -> Applied:
        """Apply one turn's facts (``turn``: its index in this graph; ``memory_id``: the
        stored memory; ``session``: the session it was said in, kept on what it writes).

        The turn-to-turn memory (what the other side just offered, whether a change was
        just asked, the changes "forget what I just said" undoes) is one session's: a turn
        of another session of the user starts it afresh, so a "yes" days later adopts
        nothing and a forget undoes nothing said elsewhere."""
        with self._lock, self.graph.lock, self.graph.writing(session):
            if session != self._session:
                self._fresh_turn_memory(session)
            self._turn_slots = tuple(dict.fromkeys(v.slot for v in facts.slots))
            step = _Step(self, facts, turn, memory_id)
            step.run()
            applied = step.applied
            if applied.added or applied.deprecated or applied.forgotten:
                applied.health = self.health()
            return applied

    def resolve(
        self,
        item: PendingReview,
        *,
        accept: bool,
        at: float | None = None,
        session: str | None = None,
    ) -> Applied:
        """A reviewer's answer to a pending change: accepted, the new value replaces the
        one in force (as if the graph had been sure); refused, nothing changes.
        ``session``: the session of the proposing turn (what the answer writes is its)."""
        applied = Applied(item.turn, labels.CHANGE)
        if not accept:
            return applied
        with self._lock, self.graph.lock, self.graph.writing(session):
            start = self.graph.log_size()
            facts = TurnFacts("", "user", at, labels.CHANGE, 1.0, None, 0.0)
            step = _Step(self, facts, item.turn, item.memory_id)
            value = SlotValue(
                subject=item.subject,
                slot=item.existing_slot,
                value=item.value,
                **{k: v for k, v in item.attributes if k in _SLOT_FIELDS},  # type: ignore[arg-type]
            )
            step.constraint(value, forced=True)
            step.applied.written = self.graph.written_since(start)
            return step.applied

    def undo(self, applied: Applied, *, at: float, session: str | None = None) -> bool:
        """Take back an accepted answer (``resolve``'s ``Applied``): the replaced value in
        force again, the accepted one withdrawn. False, and nothing changes, when a later
        turn changed what the answer wrote (``ContextGraph.revert``)."""
        with self._lock, self.graph.lock, self.graph.writing(session):
            return self.graph.revert(applied.written, at)

    def drop_session(self, session: str) -> None:
        """Take a session out of the graph, in place (a purge): the graph becomes
        ``ContextGraph.without_session``'s, the current goal the newest goal still open, and
        the turn-to-turn memory starts afresh when it was that session's. A turn observed
        meanwhile waits (one lock), so nothing it writes is lost."""
        with self._lock:
            graph = self.graph.without_session(session)
            goals = graph.nodes(NodeType.GOAL)
            self.graph = graph
            self.goal_id = (
                max(goals, key=lambda g: (max(g.turns, default=-1), g.recorded_at)).id
                if goals
                else None
            )
            if self._session == session:
                self._fresh_turn_memory(None)

    def _fresh_turn_memory(self, session: str | None) -> None:
        """The turn-to-turn memory, empty, as ``session``'s (lock held)."""
        self._session = session
        self._offered, self._asked_change = [], False
        self._changes.clear()

    def health(self) -> Health:
        """Constraints in force and the mean shortest path between active entities."""
        settings = self.settings
        constraints = len(self.graph.active_slots())
        mean = mean_entity_path(self.graph)
        reasons = []
        if constraints > settings.max_constraints:
            reasons.append(
                f"{constraints} constraints in force (more than {settings.max_constraints})"
            )
        if mean > settings.max_path_length:
            reasons.append(f"mean entity path {mean:.1f} (more than {settings.max_path_length:g})")
        return Health(constraints, mean, bool(reasons), "; ".join(reasons))

    # -- slot names --------------------------------------------------------------------
    def slot_similarity(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        if self._names is None:
            return 0.0
        self.prime_slot_names((a, b, *self._turn_slots))
        return float(self._slot_vectors[a] @ self._slot_vectors[b])

    def prime_slot_names(self, names: Iterable[str]) -> None:
        """Embed the slot names not seen yet, in one call (a replay knows all of them
        before it inserts the first turn)."""
        missing = list(dict.fromkeys(s for s in names if s not in self._slot_vectors))
        if missing and self._names is not None:
            for name, vector in zip(missing, embed_checked(self._names, missing), strict=True):
                self._slot_vectors[name] = vector


_SLOT_FIELDS = frozenset(SlotValue.__dataclass_fields__) - {"subject", "slot", "value"}


class _Step:
    """The changes of one turn (internal to ``TaskContext.observe``)."""

    def __init__(self, ctx: TaskContext, facts: TurnFacts, turn: int, memory_id: str | None):
        self.ctx = ctx
        self.graph = ctx.graph
        self.facts = facts
        self.turn = turn
        self.memory = (memory_id,) if memory_id else ()
        self.at = facts.at if facts.at is not None else float(turn)
        self.applied = Applied(turn, facts.intent)
        self.change = _Change(turn, facts.speaker, [], [], [])
        self.transaction: str | None = None

    def run(self) -> None:
        facts = self.facts
        forgotten = ""
        if facts.intent == labels.FORGET:
            self.forget(facts.forget_topic)
            if not facts.forget_topic:
                return  # "forget what I just said": nothing else in the turn counts
            forgotten = facts.forget_topic  # "Back to 55. And forget OLED": the rest stands
        if facts.intent == labels.CONFIRM:
            self.validate()
            if facts.speaker != ASSISTANT:
                self.adopt(self.ctx._offered)
        closed = None
        if (
            facts.intent == labels.CANCEL
            and not self.cancel_named(facts.cancel_topic)  # a named thing, else the goal
            and self.ctx.goal_id is not None
        ):
            closed = self.graph.node(self.ctx.goal_id).label
            self.cancel_goal()
        if facts.goal is not None and facts.goal != closed and self._switches_goal(facts):
            self.open_goal(facts.goal)
        words = {w for w in forgotten.lower().split() if len(w) > 2}
        self.entities(tuple(m for m in facts.entities if not words & _words(m.label)))
        for value in facts.slots:
            if not words & _words(f"{value.slot} {value.value}"):
                self.slot(value)
        offered = [v for v in facts.slots if v.subject in _OFFERERS and v.kind not in _NOT_OFFERS]
        if facts.speaker == ASSISTANT and self.ctx._asked_change and "?" not in facts.text:
            self.adopt(offered)  # "Moved to Friday 9:10 am": the reply to a change records it
            offered = []
        if self.change.added or self.change.deprecated:
            self.ctx._changes.append(self.change)
        self.ctx._offered = offered if facts.speaker == ASSISTANT else []
        self.ctx._asked_change = facts.speaker != ASSISTANT and facts.intent == labels.CHANGE

    # -- nodes and edges ---------------------------------------------------------------
    def _new_node(self, type_: NodeType, key: str, label: str, attrs: dict[str, Scalar]) -> Node:
        ident = node_id(self.graph.user, self.facts.at, type_, key)
        if ident in self.graph:
            return self._touch(self.graph.node(ident), attrs, revive=True)
        node = Node(
            ident, type_, label, normalise(key), tuple(attrs.items()), 1, self.at,
            turns=(self.turn,), memories=self.memory,
        )  # fmt: skip
        self.applied.added.append(ident)
        self.change.added.append(ident)
        return self.graph.put_node(node)

    def _touch(self, node: Node, attrs: dict[str, Scalar], *, revive: bool = False) -> Node:
        """A new version with more provenance and attributes (and back in force if asked);
        nothing when nothing would change."""
        merged = {**node.attrs, **{k: v for k, v in attrs.items() if v is not None}}
        turns = node.turns if self.turn in node.turns else (*node.turns, self.turn)
        memories = tuple(dict.fromkeys((*node.memories, *self.memory)))
        deprecated = False if revive else node.deprecated
        soft = False if revive else node.soft_deleted
        if (merged, turns, memories, deprecated, soft) == (
            node.attrs, node.turns, node.memories, node.deprecated, node.soft_deleted
        ):  # fmt: skip
            return node
        self.applied.updated.append(node.id)
        return self.graph.put_node(
            replace(
                node, attributes=tuple(merged.items()), version=node.version + 1,
                recorded_at=self.at, turns=turns, memories=memories, deprecated=deprecated,
                soft_deleted=soft,
            )
        )  # fmt: skip

    def _set(self, node: Node, *, deprecated: bool | None = None, soft: bool | None = None) -> Node:
        return self.graph.put_node(
            replace(
                node, version=node.version + 1, recorded_at=self.at,
                deprecated=node.deprecated if deprecated is None else deprecated,
                soft_deleted=node.soft_deleted if soft is None else soft,
            )
        )  # fmt: skip

    def _edge(self, source: str, type_: EdgeType, target: str, fact: str = "") -> Edge:
        ident = edge_id(source, type_, target)
        if ident in self.graph:
            old = self.graph.edge(ident)
            if old.active and self.turn in old.turns:
                return old
            return self.graph.put_edge(
                replace(
                    old, invalid_at=None, expired_at=None, soft_deleted=False,
                    version=old.version + 1, recorded_at=self.at,
                    turns=old.turns if self.turn in old.turns else (*old.turns, self.turn),
                    memories=tuple(dict.fromkeys((*old.memories, *self.memory))),
                )
            )  # fmt: skip
        return self.graph.put_edge(
            Edge(
                ident, source, target, type_, fact, self.at, recorded_at=self.at,
                turns=(self.turn,), memories=self.memory,
            )
        )  # fmt: skip

    def _invalidate(self, edge: Edge, *, soft: bool = False) -> None:
        if (soft and edge.soft_deleted) or (not soft and edge.deprecated):
            return
        self.graph.put_edge(
            replace(
                edge, invalid_at=edge.invalid_at if soft else self.at,
                expired_at=edge.expired_at if soft else self.at,
                soft_deleted=edge.soft_deleted or soft, version=edge.version + 1,
                recorded_at=self.at,
            )
        )  # fmt: skip

    # -- goals -------------------------------------------------------------------------
    def _switches_goal(self, facts: TurnFacts) -> bool:
        """A turn opens its goal when there is none; a change or a confirmation works on
        the current goal; otherwise the turn must be clearly nearer its own task than the
        current one ("how will my order be delivered?" stays with tracking the delivery)."""
        current = self.ctx.goal_id
        if current is None:
            return True
        if facts.intent not in (labels.STATE, labels.ASK, labels.CANCEL):
            return False
        label = self.graph.node(current).label
        scores = dict(facts.goal_scores)
        if label == facts.goal or label not in scores:
            return True
        return facts.goal_similarity - scores[label] >= GOAL_SWITCH_MARGIN

    def open_goal(self, label: str) -> None:
        goal = self._new_node(NodeType.GOAL, label, label, {"status": "open"})
        self._edge(
            self.graph.user_id, EdgeType.HAS_GOAL, goal.id, f"{self.graph.user} wants to {label}"
        )
        if self.ctx.goal_id != goal.id:
            self.ctx.goal_id = goal.id
            for _, _, constraint in self.graph.active_slots():  # orphans of no goal so far
                if not self.graph.in_edges(constraint.id, EdgeType.SATISFIES):
                    self._edge(goal.id, EdgeType.SATISFIES, constraint.id, constraint.label)
        self.applied.goal = goal.id

    def cancel_goal(self) -> None:
        goal = self.graph.node(str(self.ctx.goal_id))
        self._touch(goal, {"status": "cancelled"})
        self._set(self.graph.node(goal.id), deprecated=True)
        for edge in self.graph.in_edges(goal.id, EdgeType.HAS_GOAL):
            self._invalidate(edge)
        self.applied.deprecated.append(goal.id)
        self.change.deprecated.append(goal.id)
        self.ctx.goal_id = None

    def cancel_named(self, topic: str | None) -> bool:
        """ "Take the sports add-on off": the constraints and entities it names are no longer
        in force (deprecated, kept). False when it names none (the goal is cancelled)."""
        if not topic:
            return False
        named = [
            n
            for n in _named(self.graph, topic)
            if n.type in (NodeType.CONSTRAINT, NodeType.ENTITY) and n.active
        ]
        for node in named:
            self._touch(node, {"status": "cancelled"})
            self._set(self.graph.node(node.id), deprecated=True)
            for edge in self.graph.in_edges(node.id):
                self._invalidate(edge)
            self.applied.deprecated.append(node.id)
            self.change.deprecated.append(node.id)
        return bool(named)

    # -- entities ----------------------------------------------------------------------
    def entities(self, mentions: tuple[EntityMention, ...]) -> None:
        ids: dict[str, str] = {}
        for mention in mentions:
            node = self.entity(mention)
            ids[mention.label] = node.id
            if (mention.attributes and self.transaction is None) or (
                mention.kind == mention.label and self.transaction is None and mention.about
            ):
                self.transaction = node.id
        referenced = {a for m in mentions for a in m.about}
        for mention in mentions:
            for about in mention.about:
                if about in ids:
                    self._edge(ids[mention.label], EdgeType.REFERENCES, ids[about])
            if self.ctx.goal_id is not None and mention.label not in referenced:
                self._edge(self.ctx.goal_id, EdgeType.REFERENCES, ids[mention.label])

    def entity(self, mention: EntityMention) -> Node:
        attrs: dict[str, Scalar] = {"kind": mention.kind, **dict(mention.attributes)}
        key = mention.label
        for name, value in mention.attributes:  # one order per id; an id-less order gets it
            plain = node_id(self.graph.user, self.facts.at, NodeType.ENTITY, mention.label)
            if plain in self.graph and self.graph.node(plain).attr(name) not in (None, value):
                key = f"{mention.label} {value}"
        return self._new_node(NodeType.ENTITY, key, mention.label, attrs)

    # -- constraints -------------------------------------------------------------------
    def slot(self, value: SlotValue) -> None:
        if value.kind == IDENTIFIER:
            return  # an id is its entity's attribute (``entities``)
        speaker = self.facts.speaker
        own = value.subject == "user" or (value.subject == speaker and speaker != ASSISTANT)
        if not own:
            self.other_subject(value)
        elif value.time_marker == "past" and self.transaction is not None:
            node = self.graph.node(self.transaction)
            self._touch(node, {value.slot: value.resolved or value.value})
        else:
            self.constraint(value)

    def other_subject(self, value: SlotValue) -> None:
        """Someone else's value ("my wife wants ...") is that person's attribute, not a
        constraint of the user."""
        if value.subject in (ASSISTANT, "listener"):
            return
        name = value.subject.removeprefix("user's ")  # the same node as "my wife" the entity
        person = self._new_node(NodeType.ENTITY, name, name, {"kind": "person", "of": "user"})
        self._touch(person, {value.slot: value.value})

    def constraint(self, value: SlotValue, *, forced: bool = False) -> None:
        graph, settings = self.graph, self.ctx.settings
        slot = value.slot
        existing = graph.active_for_slot(value.subject, slot)
        if existing is not None and not comparable(value, existing):
            value = replace(value, slot=f"{slot} {value.kind}")  # "760 USD": no count of sessions
            slot = value.slot
            existing = graph.active_for_slot(value.subject, slot)
        named = self._holding(value) if value.replaces else None
        if named is not None:  # "8 instead of 7:30": the user named the value it replaces
            existing, slot, forced = named, str(named.attr("slot")), True
        elif value.replaces and existing is None and value.topic is not None:
            existing = self._said_before(value)
        if existing is None:
            existing, slot, similarity = self._similar_slot(value)
            if existing is None and value.kind == NUMBER and value.topic is None:
                return  # a number on its own that changes nothing in force: not a constraint
            if existing is not None and similarity < settings.same_slot_similarity:
                if self._key(value, slot) != existing.key:
                    self.pending(value, existing, similarity)
                return
        if (
            existing is not None
            and not forced
            and value.confidence < settings.choice_review_confidence
        ) and normalise(value.value) != normalise(str(existing.attr("value"))):
            self.pending(value, existing, value.confidence)
            return
        attrs = _attributes(value, slot, self.facts.intent)
        label = f"{slot}: {'not ' if value.negated else ''}{value.value}"
        node = self._new_node(NodeType.CONSTRAINT, self._key(value, slot), label, attrs)
        self.change.constraints.append(node.id)
        if value.time_marker == "used to":  # said as no longer true: kept, not in force
            self._set(node, deprecated=True)
            return
        if self.ctx.goal_id is not None:
            self._edge(self.ctx.goal_id, EdgeType.SATISFIES, node.id, label)
        if existing is not None and existing.id != node.id:
            self.supersede(node, existing)
        if self.facts.intent == labels.CHANGE and self.ctx.goal_id is not None:
            for ref in graph.out_edges(self.ctx.goal_id, EdgeType.REFERENCES):
                if ref.active and graph.node(ref.target).attr("kind") in _TRANSACTION_KINDS:
                    self._edge(node.id, EdgeType.MODIFIES, ref.target)

    def _holding(self, value: SlotValue) -> Node | None:
        """The subject's constraint in force whose value is the one ``value`` replaces
        ("instead of 7:30" -> the 7:30 pm table time), the latest when several hold it."""
        said = str(value.replaces)
        holding = [
            node
            for _, _, node in self.graph.active_slots(value.subject)
            if node.id not in self.change.constraints and holds(node, said)
        ]
        return max(holding, key=lambda n: n.recorded_at) if holding else None

    def _said_before(self, value: SlotValue) -> Node | None:
        """The value a change names as replaced, when no constraint holds it yet ("make it
        9pm not 6" before any time was set): kept as the slot's earlier value, replaced."""
        said = str(value.replaces)
        number = number_of(said)
        earlier = replace(
            value, value=said, number=number, resolved=None, replaces=None, negated=False,
            start=0, end=0,
        )  # fmt: skip
        key = self._key(earlier, value.slot)
        ident = node_id(self.graph.user, self.facts.at, NodeType.CONSTRAINT, key)
        if ident in self.graph:  # said before: never revived here (it may be forgotten)
            known = self.graph.node(ident)
            return known if known.active else None
        attrs = _attributes(earlier, value.slot, self.facts.intent)
        return self._new_node(NodeType.CONSTRAINT, key, f"{value.slot}: {said}", attrs)

    def adopt(self, offered: list[SlotValue]) -> None:
        """A confirmation ("yes", "grab it", "fine") accepts what the other side just
        proposed ("Shall I book the 7pm table?"): its values become the speaker's
        constraints and are VALIDATED. Alternatives (two values for one slot: "Thursday
        4:40 pm or Friday 9:10 am") and prices (what something costs is no limit the
        user set) are left out, and so is a value already in force."""
        slots = [v.slot for v in offered]
        for value in offered:
            if slots.count(value.slot) > 1 or self._in_force(value):
                continue
            own = replace(value, subject=self._adopter)
            before = len(self.change.constraints)
            self.constraint(own)
            for ident in self.change.constraints[before:]:
                if self.graph.node(ident).active:
                    self._edge(self.graph.user_id, EdgeType.VALIDATES, ident)

    def _in_force(self, value: SlotValue) -> bool:
        subject = self._adopter
        return any(holds(node, value.value) for _, _, node in self.graph.active_slots(subject))

    @property
    def _adopter(self) -> str:
        """Whose constraints adopted values become: the speaker's, the user's when the
        assistant records a change it made."""
        return USER if self.facts.speaker == ASSISTANT else self.facts.speaker

    def _key(self, value: SlotValue, slot: str) -> str:
        if value.number is not None:
            amount = f"{value.number:g} {value.unit or ''} {value.per or ''}"
        else:
            amount = value.resolved or value.value
        neg = "not " if value.negated else ""
        return f"{value.subject}|{slot}|{neg}{normalise(amount)}"

    def _similar_slot(self, value: SlotValue) -> tuple[Node | None, str, float]:
        """The active constraint this value is for when its slot name is not one in force:
        the same subject and a compatible kind (amounts and counts together, else the same
        kind). A value naming no topic ("2 months", "make it 250") is for the most recent
        such constraint; a bare number only for one of its magnitude ("we can go to 1400"
        after 1,200, not after 2 rooms), else it is dropped. Otherwise the nearest slot name."""
        best: tuple[Node | None, str, float] = (None, value.slot, 0.0)
        kind = family(value.kind)
        candidates = [
            (slot, node)
            for _, slot, node in self.graph.active_slots(value.subject)
            if family(str(node.attr("kind"))) == kind and comparable(value, node)
        ]
        if value.topic is None and value.kind != CHOICE and candidates:
            if value.kind == NUMBER:
                return self._by_magnitude(value, candidates)
            # "it's 6,000 euros now": an amount changes the latest amount, not a count
            same = [c for c in candidates if c[1].attr("kind") == value.kind] or candidates
            slot, node = max(same, key=lambda c: c[1].recorded_at)
            return node, slot, 1.0
        for slot, node in candidates:
            similarity = self.ctx.slot_similarity(value.slot, slot)
            if similarity > best[2]:
                best = (node, slot, similarity)
        if best[2] < self.ctx.settings.review_similarity:
            if value.kind == NUMBER:  # "the cap goes up to 200": a bare number whose noun
                return self._by_magnitude(value, candidates)  # names no slot in force
            return None, value.slot, best[2]
        return best

    @staticmethod
    def _by_magnitude(
        value: SlotValue, candidates: list[tuple[str, Node]]
    ) -> tuple[Node | None, str, float]:
        """A bare number changes the latest constraint of its magnitude, else nothing."""
        near = [c for c in candidates if _near_magnitude(value.number, c[1])]
        if not near:
            return None, value.slot, 0.0
        slot, node = max(near, key=lambda c: c[1].recorded_at)
        return node, slot, 1.0

    def supersede(self, new: Node, old: Node) -> None:
        self._edge(new.id, EdgeType.CONFLICTS_WITH, old.id, f"{new.label} replaces {old.label}")
        self._set(old, deprecated=True)
        for edge in self.graph.in_edges(old.id, EdgeType.SATISFIES):
            self._invalidate(edge)
        self.applied.deprecated.append(old.id)
        self.applied.conflicts.append((new.id, old.id))
        self.change.deprecated.append(old.id)

    def pending(self, value: SlotValue, existing: Node, similarity: float) -> None:
        """An unsure change, not applied: held for a reviewer when it is a pair a person
        would review, else dropped (``review_gate`` says which and why)."""
        ctx = self.ctx
        if refusal(
            value, existing, self.facts, self.turn,
            similarity=ctx.slot_similarity, related=ctx.settings.related_topic_similarity,
        ) is not None:  # fmt: skip
            return
        attrs = tuple(
            (k, getattr(value, k)) for k in sorted(_SLOT_FIELDS) if getattr(value, k) is not None
        )
        self.applied.pending.append(
            PendingReview(
                value.subject, value.slot, value.value, existing.id, str(existing.attr("slot")),
                str(existing.attr("value")), round(similarity, 3), self.turn,
                self.memory[0] if self.memory else None, attrs,
            )
        )  # fmt: skip

    # -- confirm and forget ------------------------------------------------------------
    def validate(self) -> None:
        last = next((c for c in reversed(self.ctx._changes) if c.constraints), None)
        if last is None:
            return
        for ident in last.constraints:
            if self.graph.node(ident).active:
                self._edge(self.graph.user_id, EdgeType.VALIDATES, ident)

    def forget(self, topic: str | None) -> None:
        if topic:
            wanted = (NodeType.CONSTRAINT, NodeType.ENTITY)
            named = [n for n in _named(self.graph, topic) if n.type in wanted]
            targets = [n for n in named if not n.soft_deleted]
            restore: list[str] = []
        else:
            change = next(
                (c for c in reversed(self.ctx._changes) if c.speaker == self.facts.speaker), None
            )
            if change is None:
                return
            self.ctx._changes.remove(change)
            targets = [self.graph.node(i) for i in change.added]
            targets = [n for n in targets if n.type is not NodeType.USER and not n.soft_deleted]
            restore = change.deprecated
        for node in targets:
            self._set(node, soft=True)
            for edge in (*self.graph.in_edges(node.id), *self.graph.out_edges(node.id)):
                self._invalidate(edge, soft=True)
            self.applied.forgotten.append(node.id)
            if self.ctx.goal_id == node.id:
                self.ctx.goal_id = None
        for ident in restore:  # what the forgotten change had replaced is in force again
            node = self.graph.node(ident)
            if node.soft_deleted or not node.deprecated:
                continue
            slot_holder = self.graph.active_for_slot(
                str(node.attr("subject")), str(node.attr("slot"))
            )
            if node.type is NodeType.CONSTRAINT and slot_holder is not None:
                continue
            self._set(node, deprecated=False)
            for edge in self.graph.in_edges(ident):
                if edge.deprecated and not edge.soft_deleted:
                    self._edge(edge.source, edge.type, edge.target)
            if node.type is NodeType.GOAL:
                self.ctx.goal_id = ident
            self.applied.restored.append(ident)


_OFFERERS = frozenset({ASSISTANT, OTHER_PERSON})
"""Whose values in the other side's turn are an offer: its own, or a third party's it
relays ("They have 9:15 for five on Saturday")."""
_NOT_OFFERS = frozenset({IDENTIFIER, *PRICES})
"""Kinds of the other side's values a confirmation does not adopt: ids are entities'
attributes, and a price is what something costs, not a limit the user set."""


def _words(text: str) -> set[str]:
    """The words of a label or value, to tell what a forgetting turn names."""
    return set(normalise(text).split())


def _near_magnitude(number: float | None, node: Node) -> bool:
    """Within a factor of two of the constraint's own number (a bare 1400 can change a
    1,200 budget, not a party of 4)."""
    other = node.attr("number")
    if number is None or not isinstance(other, (int, float)) or other <= 0 or number <= 0:
        return False
    return 0.5 <= number / other <= 2.0


def _named(graph: ContextGraph, topic: str) -> list[Node]:
    """Nodes naming every word of a topic, else any of its longer words (topics are a few
    nouns: "candle thing", "sports add-on")."""
    named = graph.mentioning(topic)
    if not named:
        named = [n for word in topic.split() if len(word) > 2 for n in graph.mentioning(word)]
    return list({n.id: n for n in named}.values())


_TRANSACTION_KINDS = frozenset(
    {"order", "purchase", "booking", "reservation", "rental", "shipment", "return"}
)


def _attributes(value: SlotValue, slot: str, intent: str) -> dict[str, Scalar]:
    attrs: dict[str, Scalar] = {
        "subject": value.subject,
        "slot": slot,
        "value": value.value,
        "kind": value.kind,
        "number": value.number,
        "unit": value.unit,
        "per": value.per,
        "resolved": value.resolved,
        "time_marker": value.time_marker,
        "negated": value.negated,
        "topic": value.topic,
        "confidence": value.confidence,
        "intent": intent,
    }
    return {k: v for k, v in attrs.items() if v is not None and v is not False}


def mean_entity_path(graph: ContextGraph, limit: int = 200) -> float:
    """Mean shortest-path length (hops over active edges, either direction) between pairs
    of active entities that are connected; 0 with fewer than two. At most ``limit``
    entities are measured, so the check stays bounded. The active neighbours are read
    once per call into lists of node numbers, not once per visit: the check runs after
    every turn that changed the graph, and one search per entity over the graph's own edge
    lists cost a tenth of a replay. An entity with one neighbour (most of them: a goal's
    or an order's) is searched from that neighbour, once for all such entities of it."""
    entities = [n.id for n in graph.nodes(NodeType.ENTITY)][:limit]
    if len(entities) < 2:
        return 0.0
    slot = {n.id: i for i, n in enumerate(graph.nodes())}  # active nodes, numbered
    neighbours: list[list[int]] = [[] for _ in slot]
    for edge in graph.edges():
        source, target = slot.get(edge.source), slot.get(edge.target)
        if source is not None and target is not None:
            neighbours[source].append(target)
            neighbours[target].append(source)
    wanted = [False] * len(slot)
    for ident in entities:
        wanted[slot[ident]] = True
    total = pairs = 0
    reached: dict[int, tuple[int, int]] = {}  # a leaf's neighbour -> its _reach
    for start in (slot[ident] for ident in entities):
        near = set(neighbours[start])
        near.discard(start)
        if len(near) == 1:  # every path from a leaf leaves through its one neighbour,
            (via,) = near  # one hop more; the leaf is among via's entities, 1 hop away
            if via not in reached:
                reached[via] = _reach(neighbours, wanted, via)
            count, hops = reached[via]
            pairs += count - 1
            total += count - 1 + hops - 1
        elif near:
            count, hops = _reach(neighbours, wanted, start)
            pairs += count - 1  # not itself, counted at 0 hops
            total += hops
    return total / pairs if pairs else 0.0


def _reach(neighbours: list[list[int]], wanted: list[bool], start: int) -> tuple[int, int]:
    """How many wanted nodes ``start`` reaches (itself, at 0 hops, when wanted) and the sum
    of their shortest distances from it (breadth first)."""
    seen = {start}
    frontier = [start]
    count, total, depth = int(wanted[start]), 0, 0
    while frontier:
        depth += 1
        nxt = []
        for current in frontier:
            for other in neighbours[current]:
                if other not in seen:
                    seen.add(other)
                    nxt.append(other)
                    if wanted[other]:
                        total += depth
                        count += 1
        frontier = nxt
    return count, total
