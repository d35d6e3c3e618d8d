"""The memory-aware agent loop (first seed, section 4):

    retrieve (the input is an access; optionally falling back to verified knowledge)
    -> format context within a token budget -> act (LLM)
    -> decide what is worth remembering -> store with links to what was retrieved
    -> at session end: the atlas's end-of-session policy (summary, fade or purge).

``observe`` is the same loop without the act step; the simulation harness replays
conversations through it, so what is measured is what agents run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_core.agent.attribution import attributed
from memory_core.agent.context import FORMATS, estimate_tokens, within_budget
from memory_core.agent.llm import ChatMessage, LLMClient, RuleBasedResponder
from memory_core.agent.remember import REMEMBER_POLICIES, RememberPolicy
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.agent.knowledge_fallback import KnowledgeFallback
    from memory_core.knowledge.retrieval import KnowledgeHit

SYSTEM_PROMPT = "You are a helpful assistant. Relevant memories of earlier turns:\n{context}"


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
    """An agent bound to one session of an atlas."""

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        *,
        session_id: str,
        llm: LLMClient | None = None,
        settings: AgentSettings | None = None,
        knowledge: KnowledgeFallback | None = None,
    ) -> None:
        self.atlas = atlas
        self.session_id = session_id
        self.knowledge = knowledge
        self.llm: LLMClient = llm or RuleBasedResponder()
        self.settings = settings or AgentSettings()
        remember = self.settings.remember
        self._remember: RememberPolicy = (
            REMEMBER_POLICIES[remember] if isinstance(remember, str) else remember
        )

    def recall(self, text: str, *, query_embedding: np.ndarray | None = None) -> list[RetrievalHit]:
        """Retrieve for an input; counts as an access (reinforces what is found)."""
        if not len(self.atlas):
            return []
        return self.atlas.retrieve(
            text,
            top_k=self.settings.top_k,
            session_id=self.session_id,
            cross_session=self.settings.cross_session,
            query_embedding=query_embedding,
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
        stored = self._store(text, hits, provenance, metadata, embedding)
        return AgentStep(text, hits, "", None, stored)

    def step(
        self,
        user_input: str,
        *,
        provenance: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> AgentStep:
        """One full turn: recall (falling back to knowledge), build context, ask, remember."""
        hits = self.recall(user_input)
        budget = self.settings.token_budget
        knowledge, known = (
            self.knowledge.prepare(user_input, hits, self.settings.top_k, budget)
            if self.knowledge is not None
            else ([], "")
        )
        memories = self.format_context(hits, budget - estimate_tokens(known) if known else budget)
        context = "\n".join(part for part in (memories, known) if part)
        messages = [
            ChatMessage("system", SYSTEM_PROMPT.format(context=context)),
            ChatMessage("user", user_input),
        ]
        response = self.llm.complete(messages)
        stored = self._store(user_input, hits, provenance, metadata, None)
        if self.knowledge is not None and knowledge:
            cited_by = stored.id if stored is not None else self.session_id
            self.knowledge.cite(knowledge, cited_by_id=cited_by, session_id=self.session_id)
        stored_response = None
        if self.settings.remember_responses and response.strip():
            stored_response = self._store(
                response,
                hits,
                (),
                {"speaker": "assistant"},
                None,
            )
        return AgentStep(
            user_input,
            hits,
            context,
            response,
            stored,
            stored_response,
            estimate_tokens(context),
            knowledge,
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
    ) -> MemoryNode | None:
        meta = dict(metadata or {})
        if not self._remember(text, meta):
            return None
        links = [h.node.id for h in hits[: self.settings.link_top] if h.node.id in self.atlas]
        speaker = meta.get("speaker")
        return self.atlas.add(
            attributed(text, speaker if isinstance(speaker, str) else None),
            session_id=self.session_id,
            metadata=meta,
            provenance=tuple(provenance),
            links_to=links,
            embedding=embedding,
        )
