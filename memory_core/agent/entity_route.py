"""The entity route (issue #24 point 4): a question that names an entity reaches the
memories that mention it, even when it is otherwise unlike them.

The task context graph (``context_graph.ContextStage``) keeps, for every entity a turn
names, the memories that named it. For a question the route reads the entities it names
with the same English pipeline (``Extractor.mentions``: one parse, no embedding), finds
each by its normalised label (the route's own index says which graphs named it: a
user's, or a session's without one; each graph's word index which of its nodes: never a
scan of all nodes or graphs)
and hands the memories that mention it to the engine as hints
(``ElasticMemoryAtlas.retrieve(hints=...)``): memory id -> a score on BM25's scale.

The score is the entity's inverse document frequency among the atlas's memories (BM25's
own idf, which is what one matched word of average length scores), so a name said in
every other memory counts for little and a rare one as much as a rare word shared with
the question. A speaker is an entity all their own turns are about ("I" is the speaker),
so a person's name counts the memories they said too: the name of one of two people
talking is in half the conversation, whoever says it. A memory one ``REFERENCES`` hop away (the order that is about
the iPhone) gets ``HOP_SHARE`` of it. The engine ranks hinted memories with every other
candidate: a hint stands in for BM25 only where it is larger, so it cannot outrank a
closer or more lexically similar memory by being hinted (``engine/retrieval.py``).

The engine stays free of language processing: it only takes ids and scores.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memory_core.context import Applied, EdgeType, EntityMention, NodeType
from memory_core.context.model import normalise
from memory_core.context.scope import scope_key

if TYPE_CHECKING:
    from memory_core.agent.context_graph import ContextStage
    from memory_core.context import ContextGraph

HOP_SHARE = 0.5
"""A memory reached through a REFERENCES edge counts half of one that names the entity."""
MAX_HINTS = 256
"""Most memories one question hints (a bound on cost, not a relevance rule: the best
scored are kept, and a name in more memories than this has a low idf anyway)."""
MAX_QUESTION_ENTITIES = 8
"""Most entities read from one question."""

Mentions = Callable[[str], Sequence[EntityMention]]
"""text -> the entities it names (default: the stage's extractor)."""


class EntityRoute:
    """Memories that mention what a question names, from the sessions' context graphs.

    Args:
        stage: the context graph stage whose graphs are read (the orchestrator's, or one
            the loop feeds itself when no rules run).
        mentions: reads a question's entities (default ``stage.extractor.mentions``).
    """

    __slots__ = ("_graphs", "_lock", "_mentions", "_said", "stage")

    def __init__(self, stage: ContextStage, *, mentions: Mentions | None = None) -> None:
        self.stage = stage
        self._mentions = mentions
        self._graphs: dict[str, dict[str, None]] = {}
        """Normalised entity label -> the scope keys of the graphs that name it."""
        self._said: dict[str, int] = {}
        """Normalised speaker name -> how many stored memories they said."""
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """On while the atlas's config keeps the context graph and the route."""
        config = self.stage.atlas.config
        return bool(config.context_graph and config.entity_route)

    def observe(
        self,
        text: str,
        *,
        session_id: str,
        speaker: str | None,
        user: str | None = None,
        memory_id: str | None,
    ) -> Applied | None:
        """Feed the stage one turn where no orchestrator does (harness replays)."""
        if not self.enabled or not text.strip():
            return None
        applied = self.stage.observe(
            text, session_id=session_id, speaker=speaker, user=user, memory_id=memory_id
        )
        self.index(session_id, applied, speaker=speaker, user=user, memory_id=memory_id)
        return applied

    def index(
        self,
        session_id: str,
        applied: Applied | None,
        *,
        speaker: str | None = None,
        user: str | None = None,
        memory_id: str | None = None,
    ) -> None:
        """Note which entities a turn added or mentioned again (after the stage saw it, in
        its user's graph, else its session's), and who said the memory it was stored as."""
        if speaker and memory_id and self.enabled:
            said = normalise(speaker)
            with self._lock:
                self._said[said] = self._said.get(said, 0) + 1
        if applied is None or not (applied.added or applied.updated):
            return
        scope = scope_key(session_id, user)
        graph = self.stage.context(scope).graph
        keys = {
            normalise(node.label)
            for node in (graph.node(i) for i in (*applied.added, *applied.updated) if i in graph)
            if node.type is NodeType.ENTITY
        }
        with self._lock:
            for key in keys:
                self._graphs.setdefault(key, {})[scope] = None

    def hints(self, text: str) -> dict[str, float]:
        """Memory id -> hint score for the entities ``text`` names (empty when it names
        none the graphs know, or the route is off). Every graph's memories are
        offered; the engine keeps those in the query's scope."""
        if not self.enabled or not text.strip():
            return {}
        keys = list(dict.fromkeys(normalise(m.label) for m in self.mentions(text)))
        keys = [k for k in keys if k][:MAX_QUESTION_ENTITIES]
        with self._lock:
            found = [(k, list(self._graphs.get(k, ()))) for k in keys]
            said = {k: self._said.get(k, 0) for k in keys}
        total = len(self.stage.atlas)
        scores: dict[str, float] = {}
        graphs = self.stage.graphs()
        for key, scopes in found:
            direct: dict[str, None] = {}
            near: dict[str, None] = {}
            for scope in scopes:
                if scope in graphs:  # a purged session's graph is gone
                    _collect(graphs[scope], key, direct, near)
            if not direct and not near:
                continue
            weight = idf(total, len(direct) + said[key])
            for memory in direct:
                scores[memory] = max(scores.get(memory, 0.0), weight)
            for memory in near:
                scores[memory] = max(scores.get(memory, 0.0), HOP_SHARE * weight)
        if len(scores) > MAX_HINTS:
            best = sorted(scores.items(), key=lambda item: -item[1])[:MAX_HINTS]
            scores = dict(best)
        return scores

    def mentions(self, text: str) -> Sequence[EntityMention]:
        if self._mentions is not None:
            return self._mentions(text)
        return self.stage.extractor.mentions(text)


def idf(total: int, mentioned: int) -> float:
    """BM25's inverse document frequency of a term in ``mentioned`` of ``total`` documents
    (counts held since are clamped: memories forgotten since still sit in the graph)."""
    total = max(total, 1)
    mentioned = min(max(mentioned, 1), total)
    return math.log(1.0 + (total - mentioned + 0.5) / (mentioned + 0.5))


def _collect(graph: ContextGraph, key: str, direct: dict[str, None], near: dict[str, None]) -> None:
    """Memories of the active entities labelled ``key`` (``direct``) and of the active
    entities one active REFERENCES edge away from them (``near``)."""
    for node in graph.mentioning(key):
        if node.type is not NodeType.ENTITY or not node.active or normalise(node.label) != key:
            continue
        direct.update(dict.fromkeys(node.memories))
        for edge in (
            *graph.out_edges(node.id, EdgeType.REFERENCES),
            *graph.in_edges(node.id, EdgeType.REFERENCES),
        ):
            other = graph.node(edge.target if edge.source == node.id else edge.source)
            if edge.active and other.type is NodeType.ENTITY and other.active:
                near.update((m, None) for m in other.memories if m not in direct)
