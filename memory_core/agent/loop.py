"""The memory-aware agent loop (first seed, section 4), the one path every turn takes:

    the orchestrator's forget rule (a request to forget is answered, not remembered)
    -> retrieve (the input is an access; optionally falling back to verified knowledge)
    -> respond (format context within a token budget, ask the LLM; nothing when replaying)
    -> decide what is worth remembering -> store with links to what was retrieved
    -> the orchestrator's episode and correction rules
    -> at session end: the atlas's end-of-session policy (summary, fade or purge).

``TurnLoop.turn`` runs it over any ``TurnMemory`` with a pluggable responder: the harness
replays conversations through it with a policy as the memory and no responder, the MCP
server's ``memory_write`` / ``memory_read``, the demo player and the playground go
through it with the atlas. ``MemoryAgent`` is one session of an atlas with an LLM as
the responder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

import numpy as np

from memory_core.agent.attribution import attributed
from memory_core.agent.context import FORMATS, estimate_tokens, within_budget
from memory_core.agent.context_graph import user_of
from memory_core.agent.entity_route import EntityRoute
from memory_core.agent.llm import ChatMessage, LLMClient, RuleBasedResponder
from memory_core.agent.memory import AtlasMemory, HitT, StoredT, TurnMemory
from memory_core.agent.remember import REMEMBER_POLICIES, RememberPolicy, everything
from memory_core.agent.rules import ForgetOutcome, Orchestrator, orchestrator_for
from memory_core.context import Applied
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import RuleFired
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.agent.knowledge_fallback import KnowledgeFallback
    from memory_core.knowledge.retrieval import KnowledgeHit

SYSTEM_PROMPT = "You are a helpful assistant. Relevant memories of earlier turns:\n{context}"

Responder = Callable[[Sequence[HitT]], str | None]
"""The act step: what to answer given what was recalled (None: no answer, as in a replay)."""


@dataclass(slots=True)
class Stored(Generic[StoredT]):
    """What the store stage did with one input."""

    stored: StoredT | None = None
    declined: bool = False
    """The remember policy (write filter) said it is not worth keeping."""
    forget: ForgetOutcome | None = None
    """The input was a request to forget: answered by the rule, not stored."""
    rules: list[RuleFired] = field(default_factory=list)
    context: Applied | None = None
    """What the turn changed in the session's task context graph (None: no graph)."""


@dataclass(slots=True)
class Turn(Generic[HitT, StoredT]):
    """One turn through the loop: what it recalled, answered and stored."""

    hits: list[HitT]
    response: str | None
    done: Stored[StoredT]


class TurnLoop(Generic[HitT, StoredT]):
    """The loop over one memory, with its write filter and rules.

    Args:
        memory: the atlas (``AtlasMemory``, ``GuardedMemory``) or a harness policy.
        remember: the write filter, called with the utterance and its metadata.
        link_top: a stored input links to this many of the best recalled memories.
        rules: the orchestrator (``rules.Orchestrator``); None runs no rules (the harness's
            default, so replays measure the memory alone).
        entities: the entity route (``entity_route.EntityRoute``): recalls hint the memories
            that mention what the query names. By default one over the orchestrator's
            context graph; without rules the loop feeds the route's graph itself (harness
            replays). It works while ``AtlasConfig.entity_route`` and ``context_graph``
            are on.
    """

    __slots__ = ("entities", "link_top", "memory", "remember", "rules")

    def __init__(
        self,
        memory: TurnMemory[HitT, StoredT],
        *,
        remember: RememberPolicy = everything,
        link_top: int = 3,
        rules: Orchestrator | None = None,
        entities: EntityRoute | None = None,
    ) -> None:
        self.memory = memory
        self.remember = remember
        self.link_top = link_top
        self.rules = rules
        if entities is None and rules is not None and rules.context is not None:
            entities = EntityRoute(rules.context)
        self.entities = entities

    def turn(
        self,
        utterance: str,
        *,
        session_id: str,
        top_k: int,
        recall: bool = True,
        query: str | None = None,
        query_vector: np.ndarray | None = None,
        respond: Responder[HitT] | None = None,
        vector: np.ndarray | None = None,
        provenance: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Turn[HitT, StoredT]:
        """One turn: forget rule, recall (with ``query``, the utterance by default; skipped
        with ``recall=False``), respond, store (``vector``: the attributed text's embedding).

        A request to forget recalls nothing (it must not reinforce what it removes) and is
        answered by the rule; with nothing to forget, nothing changes at all.
        """
        said = self.rules.utterance_vector(utterance) if self.rules is not None else None
        if self.rules is not None:
            forget = self.rules.forget_request(utterance, session_id, said)
            if forget is not None:
                speaker = (metadata or {}).get("speaker")
                applied, fired = self.rules.context_turn(
                    utterance,
                    session_id,
                    speaker=speaker if isinstance(speaker, str) else None,
                    user=user_of(metadata),
                    forget=True,
                    vector=said,
                )
                done: Stored[StoredT] = Stored(forget=forget, rules=fired, context=applied)
                return Turn([], forget.message, done)
        hits = (
            self.recall(
                utterance if query is None else query,
                session_id=session_id,
                top_k=top_k,
                vector=query_vector,
            )
            if recall
            else []
        )
        response = respond(hits) if respond is not None else None
        done = self.store(
            utterance,
            session_id=session_id,
            hits=hits,
            vector=vector,
            provenance=provenance,
            metadata=metadata,
            options=options,
            utterance_vector=said,
        )
        return Turn(hits, response, done)

    def recall(
        self,
        text: str,
        *,
        session_id: str | None,
        top_k: int,
        vector: np.ndarray | None = None,
        reinforce: bool = True,
        options: Mapping[str, Any] | None = None,
    ) -> list[HitT]:
        """Retrieve for an input; by default an access (reinforces what is found). With
        the entity route on, the memories that mention what ``text`` names are hinted
        (``options["hints"]``, unless the caller gave its own)."""
        options = dict(options or {})
        if self.entities is not None and "hints" not in options:
            hints = self.entities.hints(text)
            if hints:
                options["hints"] = hints
        return self.memory.recall(
            text,
            vector,
            top_k=top_k,
            session_id=session_id,
            reinforce=reinforce,
            options=options,
        )

    def store(
        self,
        utterance: str,
        *,
        session_id: str,
        hits: Sequence[HitT] = (),
        vector: np.ndarray | None = None,
        provenance: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        utterance_vector: np.ndarray | None = None,
    ) -> Stored[StoredT]:
        """Filter, store (as said by ``metadata["speaker"]``), then the episode and
        correction rules. ``vector`` is the attributed text's embedding, if known;
        ``utterance_vector`` the utterance's own, which the rules read."""
        meta = dict(metadata or {})
        speaker = meta.get("speaker")
        said_by = speaker if isinstance(speaker, str) else None
        user = user_of(meta)
        if not self.remember(utterance, meta):
            if self.rules is None:
                routed = self._route(utterance, session_id, said_by, user)
                return Stored(declined=True, context=routed)
            applied, fired = self.rules.context_turn(
                utterance, session_id, speaker=said_by, user=user, vector=utterance_vector
            )
            self._index(session_id, applied, said_by, user)
            return Stored(declined=True, rules=fired, context=applied)
        memory = self.memory
        stored = memory.store(
            attributed(utterance, speaker if isinstance(speaker, str) else None),
            vector,
            session_id=session_id,
            provenance=tuple(provenance),
            links_to=[memory.hit_id(h) for h in hits[: self.link_top]],
            metadata=meta,
            options=options or {},
        )
        stored_id = memory.stored_id(stored) if stored is not None else None
        if self.rules is None:
            routed = self._route(utterance, session_id, said_by, user, stored_id)
            return Stored(stored, context=routed)
        applied, fired = self.rules.context_turn(
            utterance,
            session_id,
            speaker=said_by,
            user=user,
            memory_id=stored_id,
            vector=utterance_vector,
        )
        self._index(session_id, applied, said_by, user, stored_id)
        if stored_id is not None:
            fired = [*self.rules.after_store(stored_id, session_id), *fired]
        return Stored(stored, rules=fired, context=applied)

    def _route(
        self,
        text: str,
        session_id: str,
        speaker: str | None,
        user: str | None,
        memory_id: str | None = None,
    ) -> Applied | None:
        """Without rules, the entity route's own graph is fed here (it needs one)."""
        if self.entities is None:
            return None
        return self.entities.observe(
            text, session_id=session_id, speaker=speaker, user=user, memory_id=memory_id
        )

    def _index(
        self,
        session_id: str,
        applied: Applied | None,
        speaker: str | None,
        user: str | None,
        memory_id: str | None = None,
    ) -> None:
        if self.entities is not None:
            self.entities.index(
                session_id, applied, speaker=speaker, user=user, memory_id=memory_id
            )


@dataclass(slots=True)
class AgentStep:
    """What one step saw and did."""

    input: str
    retrieved: list[RetrievalHit]
    context: str
    response: str | None
    stored: MemoryNode | None
    stored_response: MemoryNode | None = None
    context_tokens: int = 0
    knowledge: list[KnowledgeHit] = field(default_factory=list)
    forgotten: tuple[str, ...] = ()
    """Memories a forget request soft-deleted."""
    rules: list[RuleFired] = field(default_factory=list)
    """What the orchestrator's rules did on this step."""


@dataclass(slots=True)
class AgentSettings:
    top_k: int = 5
    link_top: int = 3
    context_format: str = "bullets"
    token_budget: int = 512
    remember: str | RememberPolicy = "key-information"
    remember_responses: bool = False
    cross_session: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.context_format not in FORMATS:
            raise InputError("context_format", f"must be one of {', '.join(FORMATS)}")
        if isinstance(self.remember, str) and self.remember not in REMEMBER_POLICIES:
            raise InputError("remember", f"must be one of {', '.join(REMEMBER_POLICIES)}")
        if self.token_budget < 1 or self.top_k < 1 or self.link_top < 0:
            raise InputError("token_budget", "token_budget and top_k must be >= 1, link_top >= 0")


class MemoryAgent:
    """An agent bound to one session of an atlas.

    ``rules`` runs the orchestrator (on by default: thresholds from the atlas's config);
    ``False`` turns it off.
    """

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        *,
        session_id: str,
        llm: LLMClient | None = None,
        settings: AgentSettings | None = None,
        knowledge: KnowledgeFallback | None = None,
        rules: Orchestrator | bool = True,
    ) -> None:
        self.atlas = atlas
        self.session_id = session_id
        self.knowledge = knowledge
        self.llm: LLMClient = llm or RuleBasedResponder()
        self.settings = settings or AgentSettings()
        remember = self.settings.remember
        self.loop: TurnLoop[RetrievalHit, MemoryNode] = TurnLoop(
            AtlasMemory(atlas, cross_session=self.settings.cross_session),
            remember=REMEMBER_POLICIES[remember] if isinstance(remember, str) else remember,
            link_top=self.settings.link_top,
            rules=orchestrator_for(atlas, rules),
        )

    def recall(self, text: str, *, query_embedding: np.ndarray | None = None) -> list[RetrievalHit]:
        """Retrieve for an input; counts as an access (reinforces what is found)."""
        return self.loop.recall(
            text, session_id=self.session_id, top_k=self.settings.top_k, vector=query_embedding
        )

    def format_context(self, hits: Sequence[RetrievalHit], budget: int | None = None) -> str:
        chosen = within_budget(hits, self.settings.token_budget if budget is None else budget)
        return FORMATS[self.settings.context_format](chosen)

    def observe(
        self,
        text: str,
        *,
        provenance: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        embedding: np.ndarray | None = None,
    ) -> AgentStep:
        """The loop without a responder: retrieve for the input, remember it if worth it."""
        turn = self.loop.turn(
            text,
            session_id=self.session_id,
            top_k=self.settings.top_k,
            query_vector=embedding,
            vector=embedding,
            provenance=provenance,
            metadata=metadata,
        )
        return self._step(text, turn)

    def step(
        self,
        user_input: str,
        *,
        provenance: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> AgentStep:
        """One full turn: recall (falling back to knowledge), build context, ask, remember.

        A request to forget is answered by what the forget rule did, not by the LLM."""
        seen = _Seen()

        def respond(hits: Sequence[RetrievalHit]) -> str:
            budget = self.settings.token_budget
            seen.knowledge, known = (
                self.knowledge.prepare(user_input, hits, self.settings.top_k, budget)
                if self.knowledge is not None
                else ([], "")
            )
            remaining = budget - estimate_tokens(known) if known else budget
            task = self._task_context(remaining, user_of(metadata))
            remaining -= estimate_tokens(task) if task else 0
            memories = self.format_context(hits, remaining)
            seen.context = "\n".join(part for part in (task, memories, known) if part)
            messages = [
                ChatMessage("system", SYSTEM_PROMPT.format(context=seen.context)),
                ChatMessage("user", user_input),
            ]
            return self.llm.complete(messages)

        turn = self.loop.turn(
            user_input,
            session_id=self.session_id,
            top_k=self.settings.top_k,
            respond=respond,
            provenance=provenance,
            metadata=metadata,
        )
        stored = turn.done.stored
        if self.knowledge is not None and seen.knowledge:
            cited_by = stored.id if stored is not None else self.session_id
            self.knowledge.cite(seen.knowledge, cited_by_id=cited_by, session_id=self.session_id)
        response = turn.response
        stored_response = None
        if (
            turn.done.forget is None
            and self.settings.remember_responses
            and response
            and response.strip()
        ):
            stored_response = self.loop.store(
                response,
                session_id=self.session_id,
                hits=turn.hits,
                metadata={"speaker": "assistant"},
            ).stored
        return self._step(user_input, turn, seen, stored_response)

    def _task_context(self, budget: int, user: str | None) -> str:
        """The active context subgraph of the turn's user (of the session without one), at
        most half the budget, before memories."""
        rules = self.loop.rules
        if rules is None or rules.context is None or not rules.context.enabled:
            return ""
        return rules.context.describe(self.session_id, budget // 2, user)

    def end_session(self, mode: str | None = None) -> int:
        return (
            self.atlas.end_session(self.session_id, mode)
            if self.session_id in self.atlas.sessions()
            else 0
        )

    @staticmethod
    def _step(
        text: str,
        turn: Turn[RetrievalHit, MemoryNode],
        seen: _Seen | None = None,
        stored_response: MemoryNode | None = None,
    ) -> AgentStep:
        context = seen.context if seen is not None else ""
        forget = turn.done.forget
        return AgentStep(
            text,
            turn.hits,
            context,
            turn.response,
            turn.done.stored,
            stored_response,
            estimate_tokens(context) if seen is not None else 0,
            seen.knowledge if seen is not None else [],
            forgotten=forget.forgotten if forget is not None else (),
            rules=turn.done.rules,
        )


@dataclass(slots=True)
class _Seen:
    """What the responder built, for the step's record."""

    context: str = ""
    knowledge: list[KnowledgeHit] = field(default_factory=list)
