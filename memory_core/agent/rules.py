"""The second seed's memory state orchestrator: named rules the agent loop runs on every turn.

- ``episode``: a session holding more than ``episode_after_memories`` short-term memories
  (active ``working``/``session`` ones not yet folded) folds its oldest that many into one
  ``episodic`` summary memory (``atlas.summarize_nodes``), optionally also recorded as a
  completed episode in the knowledge base's mid-term tier (``knowledge.agent_sinks``).
- ``knowledge_review``: a statement whose ``supersedes`` chain (what the conflict guard
  writes when a correction retires an older statement) reaches
  ``review_after_corrections`` links goes to knowledge review as a pending item.
- ``forget_request``: an input that means "forget what I just said" (``intent``)
  soft-deletes the session's ``forget_recent`` most recent user memories: tombstoned,
  never retrieved again, kept for audit. With nothing to forget, nothing changes.
- ``context_health``: the turn's task context graph (its user's, else its session's:
  ``context_graph.ContextStage``)
  holds more than ``context_max_constraints`` constraints in force, or its entities are
  more than ``context_max_path_length`` apart on average: the session's short-term
  memories are folded into an episode, as the episode rule does (once per crossing).
- ``context_review``: the graph was unsure a new value replaces the one in force; the
  change is not applied and the pending item is published for a reviewer.

Thresholds live in ``AtlasConfig`` (group ``rules``); every rule that changes the memory
publishes a ``RuleFired`` event on the atlas's bus, which the eviction log and the graph
show. Everything is read from the graph, so the rules survive a restart from a snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memory_core.agent.context_graph import ContextStage
from memory_core.agent.intent import IntentDetector
from memory_core.context import Applied, Node, PendingReview
from memory_core.context.scope import scope_key
from memory_core.embedding.base import embed_checked
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import RuleFired
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus, Relation

EPISODE = "episode"
KNOWLEDGE_REVIEW = "knowledge_review"
FORGET_REQUEST = "forget_request"
CONTEXT_HEALTH = "context_health"
CONTEXT_REVIEW = "context_review"
RULES = (EPISODE, KNOWLEDGE_REVIEW, FORGET_REQUEST, CONTEXT_HEALTH, CONTEXT_REVIEW)
SHORT_TERM = frozenset({MemoryKind.WORKING, MemoryKind.SESSION})
SOFT_DELETE_REASON = "soft-deleted on request"
NOTHING_TO_FORGET = "nothing to forget: no memory of what you said in this session"

ReviewSink = Callable[[MemoryNode, int, str], str | None]
"""Submit ``node`` (corrected that many times; ``str`` is the chain's oldest id, a stable
key for the entity) for review; returns the knowledge item's id, None if not accepted."""
EpisodeSink = Callable[[str, MemoryNode, Sequence[str]], str | None]
"""Record the episode memory folded from these ids of a session; returns the episode's id."""
ContextReviewSink = Callable[[str, PendingReview, Node], str | None]
"""Queue a change the task context graph held back (session, the change, the constraint in
force) for a reviewer (``conflicts.context_items.ContextReviewSink``); returns the review
item's id, which the stage keeps so the reviewer's answer reaches the graph."""


@dataclass(frozen=True, slots=True)
class ForgetOutcome:
    """What a forget request did: the ids soft-deleted (none: nothing changed) and why."""

    forgotten: tuple[str, ...]
    message: str


class Orchestrator:
    """Runs the rules against one atlas, reading thresholds from its live config.

    Args:
        atlas: the memory the rules act on.
        review: where corrected statements go (``knowledge.agent_sinks.knowledge_review``);
            without one the rule still fires its event, saying no knowledge base is attached.
        episodes: where folded episodes are also recorded
            (``knowledge.agent_sinks.knowledge_episodes``).
        intent: recognises forget requests; by default with the atlas's embedder.
        context: the task context graph stage (by default one over the atlas, used while
            ``AtlasConfig.context_graph`` is true; ``False``: none).
    """

    __slots__ = (
        "_folded",
        "_short",
        "_unhealthy",
        "atlas",
        "context",
        "context_review",
        "episodes",
        "intent",
        "review",
    )

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        *,
        review: ReviewSink | None = None,
        episodes: EpisodeSink | None = None,
        intent: IntentDetector | None = None,
        context: ContextStage | bool = True,
        context_review: ContextReviewSink | None = None,
    ) -> None:
        self.atlas = atlas
        self.review = review
        self.context_review = context_review
        self.episodes = episodes
        self.intent = intent or IntentDetector(atlas.embedder)
        self.context = (
            context
            if isinstance(context, ContextStage)
            else ContextStage(atlas)
            if context
            else None
        )
        self._unhealthy: set[str] = set()  # sessions whose graph is past a health limit
        # session -> ids of its short-term memories not yet folded, oldest first: read from
        # the graph once per session, then kept up to date, so a write costs no full scan
        self._short: dict[str, dict[str, None]] = {}
        self._folded: set[str] = set()  # every id an episode folded (a merge may return one)

    # -- before the store --------------------------------------------------------------
    def utterance_vector(self, text: str) -> np.ndarray | None:
        """The utterance's unit embedding when a rule reads it (the forget rule, the
        context graph): embedded once per turn and passed to both; None when none does."""
        stage = self.context
        reads = self.atlas.config.forget_on_request or (stage is not None and stage.enabled)
        if not reads or not text.strip():
            return None
        vector: np.ndarray = embed_checked(self.atlas.embedder, [text])[0]
        return vector

    def forget_request(
        self, text: str, session_id: str, vector: np.ndarray | None = None
    ) -> ForgetOutcome | None:
        """None when ``text`` is not a request to forget (or the rule is off); ``vector``:
        the text's unit embedding (``utterance_vector``), if known."""
        config = self.atlas.config
        if not config.forget_on_request or not text.strip():
            return None
        if self.intent.embedder is not self.atlas.embedder:
            vector = None  # a detector over another model embeds the text itself
        if not self.intent.matches(text, config.forget_intent_similarity, vector):
            return None
        with self.atlas.lock:
            targets = self._recent_user_memories(session_id, config.forget_recent)
            if not targets:
                return ForgetOutcome((), NOTHING_TO_FORGET)
            for node in targets:
                self.atlas.forget(node.id, reason=SOFT_DELETE_REASON)
            ids = tuple(n.id for n in targets)
            message = f"{SOFT_DELETE_REASON}: {_count(len(ids), 'memory')}"
            self._fire(FORGET_REQUEST, session_id, ids[-1], message, ids)
        return ForgetOutcome(ids, message)

    # -- after the store ---------------------------------------------------------------
    def after_store(self, node_id: str, session_id: str) -> list[RuleFired]:
        """Run the episode and correction rules for a memory just stored."""
        with self.atlas.lock:
            fired = [self._corrections(node_id), self._episode(node_id, session_id)]
        return [f for f in fired if f is not None]

    def short_term(self, session_id: str) -> list[MemoryNode]:
        """The session's active working/session memories no episode has folded, oldest first."""
        nodes = self.atlas.nodes(session_id)
        folded = self._folded_in(nodes)
        return [
            n
            for n in nodes
            if n.status is MemoryStatus.ACTIVE and n.kind in SHORT_TERM and n.id not in folded
        ]

    def _folded_in(self, nodes: Sequence[MemoryNode]) -> set[str]:
        """Ids the episodic memories among ``nodes`` summarize."""
        return {
            e.target_id
            for n in nodes
            if n.kind is MemoryKind.EPISODIC
            for e in self.atlas.edges(n.id)
            if e.relation is Relation.SUMMARIZES and e.source_id == n.id
        }

    def corrections(self, node_id: str) -> tuple[int, str]:
        """Length of the longest ``supersedes`` chain from ``node_id``, and its oldest end."""
        depth, root = 0, node_id
        frontier = [(node_id, 0)]
        seen = {node_id}
        while frontier:
            current, d = frontier.pop()
            if d > depth:
                depth, root = d, current
            for edge in self.atlas.edges(current):
                target = edge.target_id
                older = edge.relation is Relation.SUPERSEDES and edge.source_id == current
                if older and target not in seen and target in self.atlas:
                    seen.add(target)
                    frontier.append((target, d + 1))
        return depth, root

    # -- the task context graph --------------------------------------------------------
    def context_turn(
        self,
        text: str,
        session_id: str,
        *,
        speaker: str | None,
        user: str | None = None,
        memory_id: str | None = None,
        forget: bool = False,
        vector: np.ndarray | None = None,
    ) -> tuple[Applied | None, list[RuleFired]]:
        """Insert a turn into its user's context graph (its session's without a ``user``);
        fire the health and review rules (``vector``: the text's unit embedding, if known)."""
        stage = self.context
        if stage is None or not stage.enabled or not text.strip():
            return None, []
        applied = stage.observe(
            text,
            session_id=session_id,
            speaker=speaker,
            user=user,
            memory_id=memory_id,
            forget=forget,
            vector=vector,
        )
        fired: list[RuleFired] = []
        for item in applied.pending:
            message = (
                f"context change pending review: {item.existing_slot} {item.existing_value!r} "
                f"-> {item.slot} {item.value!r} (similarity {item.similarity:.2f})"
            )
            queued = self._queue_context(session_id, item, user)
            sources = (item.memory_id,) if item.memory_id else ()
            fired.append(
                self._fire(CONTEXT_REVIEW, session_id, item.existing_id, message, sources, queued)
            )
        health = applied.health
        if health is not None and not health.fired:
            self._unhealthy.discard(session_id)
        elif health is not None and session_id not in self._unhealthy:
            self._unhealthy.add(session_id)
            with self.atlas.lock:
                episode = self._fold_now(session_id, health.reason)
            if episode is not None:
                fired.append(episode)
        return applied, fired

    def _queue_context(self, session_id: str, item: PendingReview, user: str | None) -> str | None:
        """The review item a held-back change went to (None without a sink)."""
        stage, sink = self.context, self.context_review
        if stage is None or sink is None:
            return None
        graph = stage.context(scope_key(session_id, user)).graph
        if item.existing_id not in graph:
            return None
        queued = sink(session_id, item, graph.node(item.existing_id))
        if queued is not None:
            stage.hold(queued, session_id, item, user)
        return queued

    def _fold_now(self, session_id: str, reason: str) -> RuleFired | None:
        if session_id not in self.atlas.sessions():
            return None
        ids = [n.id for n in self.short_term(session_id)]
        if len(ids) < 2:
            return None
        node = self.atlas.summarize_nodes(session_id, ids, kind=MemoryKind.EPISODIC)
        if node is None:
            return None
        self._folded.update(ids)
        short = self._short.get(session_id)
        if short is not None:
            for folded in ids:
                short.pop(folded, None)
        item = self.episodes(session_id, node, ids) if self.episodes is not None else None
        message = f"episode created from {_count(len(ids), 'memory')}: context graph {reason}"
        return self._fire(CONTEXT_HEALTH, session_id, node.id, message, tuple(ids), item)

    # -- internals ---------------------------------------------------------------------
    def _episode(self, node_id: str, session_id: str) -> RuleFired | None:
        limit = self.atlas.config.episode_after_memories
        if limit is None or session_id not in self.atlas.sessions():
            return None
        short = self._short.get(session_id)
        if short is None:
            nodes = self.atlas.nodes(session_id)
            self._folded |= self._folded_in(nodes)
            short = self._short[session_id] = dict.fromkeys(
                n.id for n in self.short_term(session_id)
            )
        elif node_id in self.atlas and node_id not in self._folded:
            short.setdefault(node_id)  # a merge into an older memory keeps that one's place
        if len(short) <= limit:
            return None
        for stale in [i for i in short if not self._is_short_term(i)]:  # evicted, forgotten...
            del short[stale]
        if len(short) <= limit:
            return None
        ids = list(short)[:limit]
        node = self.atlas.summarize_nodes(session_id, ids, kind=MemoryKind.EPISODIC)
        if node is None:
            return None
        for folded in ids:
            del short[folded]
        self._folded.update(ids)
        item = self.episodes(session_id, node, ids) if self.episodes is not None else None
        message = f"episode created from {_count(len(ids), 'memory')}"
        return self._fire(EPISODE, session_id, node.id, message, tuple(ids), item)

    def _is_short_term(self, node_id: str) -> bool:
        if node_id not in self.atlas:
            return False
        node = self.atlas.get(node_id)
        return node.status is MemoryStatus.ACTIVE and node.kind in SHORT_TERM

    def _corrections(self, node_id: str) -> RuleFired | None:
        needed = self.atlas.config.review_after_corrections
        if needed is None or node_id not in self.atlas:
            return None
        depth, root = self.corrections(node_id)
        if depth != needed:  # once, when the chain reaches the threshold
            return None
        node = self.atlas.get(node_id)
        item = self.review(node, depth, root) if self.review is not None else None
        where = "moved to knowledge review" if item is not None else "due for knowledge review"
        message = f"{where} after {_count(depth, 'correction')}"
        if self.review is None:
            message += " (no knowledge base attached)"
        return self._fire(KNOWLEDGE_REVIEW, node.session_id, node_id, message, (root,), item)

    def _recent_user_memories(self, session_id: str, count: int) -> list[MemoryNode]:
        if session_id not in self.atlas.sessions():
            return []
        said = [
            n
            for n in self.atlas.nodes(session_id)
            if n.status is MemoryStatus.ACTIVE
            and n.kind in SHORT_TERM
            and n.metadata.get("speaker") != "assistant"
        ]
        return said[-count:]

    def _fire(
        self,
        rule: str,
        session_id: str | None,
        node_id: str,
        message: str,
        source_ids: tuple[str, ...],
        item_id: str | None = None,
    ) -> RuleFired:
        event = RuleFired(
            at=self.atlas.clock.now(),
            session_id=session_id,
            rule=rule,
            node_id=node_id,
            message=message,
            source_ids=source_ids,
            item_id=item_id,
        )
        self.atlas.events.publish(event)
        return event


def orchestrator_for(atlas: ElasticMemoryAtlas, rules: Orchestrator | bool) -> Orchestrator | None:
    """The orchestrator a loop over ``atlas`` runs: ``rules`` itself, a default one for
    ``True``, none for ``False``."""
    if isinstance(rules, Orchestrator):
        return rules
    return Orchestrator(atlas) if rules else None


def _count(n: int, noun: str) -> str:
    plural = {"memory": "memories", "correction": "corrections"}[noun]
    return f"{n} {noun if n == 1 else plural}"
