"""The task context graph as a stage of the agent loop (issue #24).

Every turn of a session (what the user says and, when stored, what the assistant says)
is extracted and inserted into that session's ``TaskContext``, with the stored memory's id
and the turn's index as provenance. As in a replay, a turn is read with the other side's
turn before it (what a verbless "Stalls, please." answers), and with the vector the loop
already computed for the utterance, so the turn is not embedded twice. The responder gets the active subgraph (the goal, the
constraints in force and what they replaced, the key entities) ahead of the recalled
memories, within the token budget, so "what is my hotel limit?" is answered from the
constraint in force, never from the one it replaced.

The stage rides on the orchestrator (``rules.Orchestrator``): on wherever the rules are on
and ``AtlasConfig.context_graph`` is true, off in harness replays. The English parser
and the classifiers' examples load on the first turn (``memory_core.context.warm(embedder)``
loads them ahead).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from memory_core.agent.context import estimate_tokens
from memory_core.context import (
    Applied,
    ContextSettings,
    Extractor,
    PendingReview,
    TaskContext,
    TurnFacts,
    describe,
)
from memory_core.context.extract import labels

if TYPE_CHECKING:
    from memory_core.engine.atlas import ElasticMemoryAtlas

CONTEXT_HEADER = "Task context (constraints in force):"


class ContextStage:
    """One task context graph per session of an atlas, fed turn by turn."""

    __slots__ = (
        "_answered",
        "_extractor",
        "_held",
        "_last",
        "_lock",
        "_sessions",
        "_turns",
        "atlas",
    )

    def __init__(self, atlas: ElasticMemoryAtlas, *, extractor: Extractor | None = None) -> None:
        self.atlas = atlas
        self._extractor = extractor
        self._sessions: dict[str, TaskContext] = {}
        self._turns: dict[str, int] = {}
        self._last: dict[str, tuple[str, str]] = {}
        """Each session's latest turn: its speaker and text (what the next turn answers)."""
        self._held: dict[str, tuple[str, PendingReview]] = {}
        """Review item id -> (session, the change it holds back), until a reviewer answers."""
        self._answered: dict[str, tuple[str, PendingReview, Applied]] = {}
        """Review item id -> what its answer did, until it is undone (``withdraw``)."""
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return bool(self.atlas.config.context_graph)

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            with self._lock:
                if self._extractor is None:
                    self._extractor = Extractor(self.atlas.embedder)
        return self._extractor

    def settings(self) -> ContextSettings:
        config = self.atlas.config
        return ContextSettings(
            max_constraints=config.context_max_constraints,
            max_path_length=config.context_max_path_length,
        )

    def of(self, session_id: str) -> TaskContext:
        """The session's graph (made empty on first use)."""
        with self._lock:
            context = self._sessions.get(session_id)
            if context is None:
                context = self._sessions[session_id] = TaskContext(
                    session_id, embedder=self.atlas.embedder, settings=self.settings()
                )
            return context

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def observe(
        self,
        text: str,
        *,
        session_id: str,
        speaker: str | None,
        memory_id: str | None = None,
        forget: bool = False,
        vector: np.ndarray | None = None,
    ) -> Applied:
        """Extract one turn and insert it (``forget``: the loop already knows it is a
        request to forget, whatever the graph's own intent classifier says; ``vector``:
        the text's unit embedding, when the loop has it)."""
        context = self.of(session_id)
        context.settings = self.settings()
        said_by = speaker or "user"
        with self._lock:
            turn = self._turns.get(session_id, 0)
            self._turns[session_id] = turn + 1
            before = self._last.get(session_id)
            self._last[session_id] = (said_by, text)
        extractor = self.extractor
        if vector is not None and extractor.embedder is not self.atlas.embedder:
            vector = None  # the loop's vector is the atlas model's
        facts = extractor.extract(
            text,
            speaker=said_by,
            at=self.atlas.clock.now(),
            vector=vector,
            reply_to=before[1] if before is not None and before[0] != said_by else None,
        )
        if forget and facts.intent != labels.FORGET:
            facts = _as_forget(facts)
        return context.observe(facts, turn=turn, memory_id=memory_id)

    def hold(self, item_id: str, session_id: str, pending: PendingReview) -> None:
        """Remember which unsure change a review item stands for (``answer`` applies it)."""
        with self._lock:
            self._held[item_id] = (session_id, pending)

    def held(self) -> dict[str, tuple[str, PendingReview]]:
        """The changes waiting for a reviewer, by review item id."""
        with self._lock:
            return dict(self._held)

    def answer(self, item_id: str, *, accept: bool) -> Applied | None:
        """A reviewer's answer to a held change: accepted, the new value replaces the one
        in force (``TaskContext.resolve``); refused, nothing changes. None when the item is
        not one of this stage's (a memory pair, or held before a restart)."""
        with self._lock:
            held = self._held.pop(item_id, None)
            context = self._sessions.get(held[0]) if held is not None else None
        if held is None or context is None:
            return None
        applied = context.resolve(held[1], accept=accept, at=self.atlas.clock.now())
        with self._lock:
            self._answered[item_id] = (*held, applied)
        return applied

    def withdraw(self, item_id: str) -> bool | None:
        """A reviewer undid their answer: the graph takes back what it applied and holds
        the change again (the item is open again, and answered anew). False when a later
        turn changed what the answer wrote: the graph keeps the conversation's newer
        state and still holds the change; None when the item is not one this stage
        answered."""
        with self._lock:
            answered = self._answered.pop(item_id, None)
            context = self._sessions.get(answered[0]) if answered is not None else None
        if answered is None or context is None:
            return None
        session_id, pending, applied = answered
        reverted = context.undo(applied, at=self.atlas.clock.now())
        with self._lock:
            self._held[item_id] = (session_id, pending)
        return reverted

    def describe(self, session_id: str, budget: int) -> str:
        """The active subgraph as context lines, cut to ``budget`` tokens (0: nothing)."""
        with self._lock:
            context = self._sessions.get(session_id)
        if context is None or budget <= 0:
            return ""
        lines = describe(context.graph, context.goal_id)
        if not lines:
            return ""
        out = [CONTEXT_HEADER]
        used = estimate_tokens(CONTEXT_HEADER)
        for line in lines:
            cost = estimate_tokens(line) + 1
            if used + cost > budget:
                break
            out.append(f"- {line}")
            used += cost
        return "\n".join(out) if len(out) > 1 else ""


def _as_forget(facts: TurnFacts) -> TurnFacts:
    return replace(facts, intent=labels.FORGET)
