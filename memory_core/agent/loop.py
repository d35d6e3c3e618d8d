"""The memory-aware agent loop (first seed, section 4), the one path every turn takes:

    retrieve (the input is an access; optionally falling back to verified knowledge)
    -> format context within a token budget -> act (the responder)
    -> decide what is worth remembering -> the orchestrator's forget rule
    -> store with links to what was retrieved -> the orchestrator's episode and correction
       rules -> at session end: the atlas's end-of-session policy (summary, fade or purge).

``TurnLoop`` is everything but the act step, over any ``TurnMemory``: the harness replays
conversations through it with a policy as the memory and no responder, the MCP server's
``memory_write`` / ``memory_read`` and the demo player go through it with the atlas.
``MemoryAgent`` adds the act step for one session of an atlas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

import numpy as np

from memory_core.agent.attribution import attributed
from memory_core.agent.context import FORMATS, estimate_tokens, within_budget
from memory_core.agent.llm import ChatMessage, LLMClient, RuleBasedResponder
from memory_core.agent.memory import AtlasMemory, HitT, StoredT, TurnMemory
from memory_core.agent.remember import REMEMBER_POLICIES, RememberPolicy, everything
from memory_core.agent.rules import ForgetOutcome, Orchestrator, orchestrator_for
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import RuleFired
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.agent.knowledge_fallback import KnowledgeFallback
    from memory_core.knowledge.retrieval import KnowledgeHit

SYSTEM_PROMPT = "You are a helpful assistant. Relevant memories of earlier turns:\n{context}"


@dataclass(slots=True)
class Stored(Generic[StoredT]):
    """What the store stage did with one input."""

    stored: StoredT | None = None
    declined: bool = False
    """The remember policy (write filter) said it is not worth keeping."""
    forget: ForgetOutcome | None = None
    """The input was a request to forget; it is not stored itself."""
    rules: list[RuleFired] = field(default_factory=list)


class TurnLoop(Generic[HitT, StoredT]):
    """Recall and store stages of the loop over one memory, with its filter and rules.

    Args:
        memory: the atlas (``AtlasMemory``) or a harness policy.
        remember: the write filter, called with the utterance and its metadata.
        link_top: a stored input links to this many of the best recalled memories.
        rules: the orchestrator (``rules.Orchestrator``); None runs no rules (the harness's
            default, so replays measure the memory alone).
    """

    __slots__ = ("link_top", "memory", "remember", "rules")

    def __init__(
        self,
        memory: TurnMemory[HitT, StoredT],
        *,
        remember: RememberPolicy = everything,
        link_top: int = 3,
        rules: Orchestrator | None = None,
    ) -> None:
        self.memory = memory
        self.remember = remember
        self.link_top = link_top
        self.rules = rules

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
        """Retrieve for an input; by default an access (reinforces what is found)."""
        return self.memory.recall(
            text,
            vector,
            top_k=top_k,
            session_id=session_id,
            reinforce=reinforce,
            options=options or {},
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
    ) -> Stored[StoredT]:
        """Filter, forget rule, store (as said by ``metadata["speaker"]``), then the rules.

        ``vector`` is the embedding of the attributed text (``attribution``), if known.
        """
        meta = dict(metadata or {})
        if not self.remember(utterance, meta):
            return Stored(declined=True)
        if self.rules is not None:
            forget = self.rules.forget_request(utterance, session_id)
            if forget is not None:
                return Stored(forget=forget)
        speaker = meta.get("speaker")
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
        fired = (
            self.rules.after_store(memory.stored_id(stored), session_id)
            if self.rules is not None and stored is not None
            else []
        )
        return Stored(stored, rules=fired)


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
        """Retrieve for the input and remember it if worth it — no response generated."""
        hits = self.recall(text, query_embedding=embedding)
        done = self._store(text, hits, provenance, metadata, embedding)
        return AgentStep(
            text,
            hits,
            "",
            done.forget.message if done.forget is not None else None,
            done.stored,
            forgotten=done.forget.forgotten if done.forget is not None else (),
            rules=done.rules,
        )

    def step(
        self,
        user_input: str,
        *,
        provenance: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> AgentStep:
        """One full turn: recall (falling back to knowledge), build context, ask, remember.

        A request to forget is answered by what the forget rule did, not by the LLM."""
        hits = self.recall(user_input)
        budget = self.settings.token_budget
        knowledge, known = (
            self.knowledge.prepare(user_input, hits, self.settings.top_k, budget)
            if self.knowledge is not None
            else ([], "")
        )
        memories = self.format_context(hits, budget - estimate_tokens(known) if known else budget)
        context = "\n".join(part for part in (memories, known) if part)
        done = self._store(user_input, hits, provenance, metadata, None)
        if done.forget is not None:
            return AgentStep(
                user_input,
                hits,
                context,
                done.forget.message,
                None,
                context_tokens=estimate_tokens(context),
                forgotten=done.forget.forgotten,
            )
        messages = [
            ChatMessage("system", SYSTEM_PROMPT.format(context=context)),
            ChatMessage("user", user_input),
        ]
        response = self.llm.complete(messages)
        stored = done.stored
        if self.knowledge is not None and knowledge:
            cited_by = stored.id if stored is not None else self.session_id
            self.knowledge.cite(knowledge, cited_by_id=cited_by, session_id=self.session_id)
        stored_response = None
        if self.settings.remember_responses and response.strip():
            stored_response = self._store(response, hits, (), {"speaker": "assistant"}, None).stored
        return AgentStep(
            user_input,
            hits,
            context,
            response,
            stored,
            stored_response,
            estimate_tokens(context),
            knowledge,
            rules=done.rules,
        )

    def end_session(self, mode: str | None = None) -> int:
        return (
            self.atlas.end_session(self.session_id, mode)
            if self.session_id in self.atlas.sessions()
            else 0
        )

    def _store(
        self,
        text: str,
        hits: Sequence[RetrievalHit],
        provenance: Sequence[str],
        metadata: Mapping[str, Any] | None,
        embedding: np.ndarray | None,
    ) -> Stored[MemoryNode]:
        return self.loop.store(
            text,
            session_id=self.session_id,
            hits=hits,
            vector=embedding,
            provenance=provenance,
            metadata=metadata,
        )
