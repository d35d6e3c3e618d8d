"""The task context graph as a stage of the agent loop (issue #24).

One graph per user, not per session: the seed's node ids are a hash of user + day + key,
and a user's goals and constraints carry across their sessions (the cap set in session 1
and raised in session 3 is one slot, changed). A turn whose metadata names its user
(``user_id``, ``conflicts.detector.USER_KEY``) goes into that user's graph; a turn without
one into its session's graph alone, the rule the conflict guard keeps for memories (issue
#29; ``context.scope``). Every turn (what the user says and, when stored, what the
assistant says) is extracted and inserted with the stored memory's id, the turn's index
in its graph and its session as provenance (``ContextGraph.writing``), so a view can say
"set in session 1, changed in session 3" and a purged session can be taken out again.

As in a replay, a turn is read with the other side's turn before it in its session (what
a verbless "Stalls, please." answers), and with the vector the loop already computed for
the utterance, so the turn is not embedded twice. The responder gets the active subgraph
(the goal, the constraints in force and what they replaced, the key entities) ahead of
the recalled memories, within the token budget, so "what is my hotel limit?" is answered
from the constraint in force, never from the one it replaced.

The stage rides on the orchestrator (``rules.Orchestrator``): on wherever the rules are on
and ``AtlasConfig.context_graph`` is true, off in harness replays. The English parser
and the classifiers' examples load on the first turn (``memory_core.context.warm(embedder)``
loads them ahead).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_core.agent.context import estimate_tokens
from memory_core.conflicts.detector import USER_KEY
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
from memory_core.context.scope import scope_key, scope_owner
from memory_core.engine.events import AtlasEvent, SessionEnded

if TYPE_CHECKING:
    from memory_core.context import ContextGraph
    from memory_core.engine.atlas import ElasticMemoryAtlas

CONTEXT_HEADER = "Task context (constraints in force):"


def user_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The user a turn's metadata names (None: the turn stays in its session)."""
    user = (metadata or {}).get(USER_KEY)
    return str(user) if user not in (None, "") else None


@dataclass(frozen=True, slots=True)
class Held:
    """A change held back for a reviewer: the graph it belongs to and the session whose
    turn proposed it."""

    scope: str
    session_id: str
    pending: PendingReview


class ContextStage:
    """One task context graph per user (per session for turns that name no user), fed
    turn by turn."""

    __slots__ = (
        "_answered",
        "_contexts",
        "_extractor",
        "_held",
        "_last",
        "_lock",
        "_scopes",
        "_turns",
        "_user",
        "atlas",
    )

    def __init__(self, atlas: ElasticMemoryAtlas, *, extractor: Extractor | None = None) -> None:
        self.atlas = atlas
        self._extractor = extractor
        self._contexts: dict[str, TaskContext] = {}
        """Scope key (``scope_key``) -> its graph."""
        self._turns: dict[str, int] = {}
        """Scope key -> the next turn's index in its graph (unique across its sessions)."""
        self._scopes: dict[str, dict[str, None]] = {}
        """Scope key -> the sessions that wrote into its graph, in order."""
        self._user: dict[str, str] = {}
        """Session -> the user its turns named last (its reads go to that user's graph)."""
        self._last: dict[str, tuple[str, str]] = {}
        """Each session's latest turn: its speaker and text (what the next turn answers)."""
        self._held: dict[str, Held] = {}
        """Review item id -> the change it holds back, until a reviewer answers."""
        self._answered: dict[str, tuple[Held, Applied]] = {}
        """Review item id -> what its answer did, until it is undone (``withdraw``)."""
        self._lock = threading.Lock()
        atlas.events.subscribe(self._on_event, (SessionEnded,))  # the one type it reads

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

    # -- which graph -------------------------------------------------------------------
    def scope(self, session_id: str, user: str | None = None) -> str:
        """The graph a read for ``session_id`` goes to: ``user``'s when given, else the user
        the session's turns named, else the session's own."""
        with self._lock:
            named = user or self._user.get(session_id)
        return scope_key(session_id, named)

    def of(self, session_id: str, user: str | None = None) -> TaskContext:
        """The graph a session reads (``scope``), made empty on first use."""
        return self.context(self.scope(session_id, user))

    def context(self, scope: str) -> TaskContext:
        """The graph of a scope key, made empty on first use (node ids hash its user: the
        user id, or the session id for a session without one)."""
        with self._lock:
            context = self._contexts.get(scope)
            if context is None:
                context = self._contexts[scope] = TaskContext(
                    scope_owner(scope), embedder=self.atlas.embedder, settings=self.settings()
                )
            return context

    def graphs(self) -> dict[str, ContextGraph]:
        """Every graph by scope key (``user:<id>`` or ``session:<id>``)."""
        with self._lock:
            return {scope: context.graph for scope, context in self._contexts.items()}

    def sessions(self, scope: str | None = None) -> list[str]:
        """Sessions that wrote into the scope's graph (every graph's: all of them), in order."""
        with self._lock:
            if scope is not None:
                return list(self._scopes.get(scope, ()))
            return list(dict.fromkeys(s for seen in self._scopes.values() for s in seen))

    # -- turns -------------------------------------------------------------------------
    def observe(
        self,
        text: str,
        *,
        session_id: str,
        speaker: str | None,
        user: str | None = None,
        memory_id: str | None = None,
        forget: bool = False,
        vector: np.ndarray | None = None,
    ) -> Applied:
        """Extract one turn and insert it into its user's graph (its session's without a
        ``user``). ``forget``: the loop already knows it is a request to forget, whatever
        the graph's own intent classifier says; ``vector``: the text's unit embedding, when
        the loop has it."""
        scope = scope_key(session_id, user)
        context = self.context(scope)
        context.settings = self.settings()
        said_by = speaker or "user"
        with self._lock:
            turn = self._turns.get(scope, 0)
            self._turns[scope] = turn + 1
            self._scopes.setdefault(scope, {})[session_id] = None
            if user:
                self._user[session_id] = user
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
        return context.observe(facts, turn=turn, memory_id=memory_id, session=session_id)

    # -- review ------------------------------------------------------------------------
    def hold(
        self, item_id: str, session_id: str, pending: PendingReview, user: str | None = None
    ) -> None:
        """Remember which unsure change a review item stands for (``answer`` applies it)."""
        with self._lock:
            self._held[item_id] = Held(scope_key(session_id, user), session_id, pending)

    def held(self) -> dict[str, Held]:
        """The changes waiting for a reviewer, by review item id."""
        with self._lock:
            return dict(self._held)

    def answer(self, item_id: str, *, accept: bool) -> Applied | None:
        """A reviewer's answer to a held change: accepted, the new value replaces the one
        in force (``TaskContext.resolve``); refused, nothing changes. None when the item is
        not one of this stage's (a memory pair, or held before a restart)."""
        with self._lock:
            held = self._held.pop(item_id, None)
            context = self._contexts.get(held.scope) if held is not None else None
        if held is None or context is None:
            return None
        applied = context.resolve(
            held.pending, accept=accept, at=self.atlas.clock.now(), session=held.session_id
        )
        with self._lock:
            self._answered[item_id] = (held, applied)
        return applied

    def withdraw(self, item_id: str) -> bool | None:
        """A reviewer undid their answer: the graph takes back what it applied and holds
        the change again (the item is open again, and answered anew). False when a later
        turn changed what the answer wrote: the graph keeps the conversation's newer
        state and still holds the change; None when the item is not one this stage
        answered."""
        with self._lock:
            answered = self._answered.pop(item_id, None)
            context = self._contexts.get(answered[0].scope) if answered is not None else None
        if answered is None or context is None:
            return None
        held, applied = answered
        reverted = context.undo(applied, at=self.atlas.clock.now(), session=held.session_id)
        with self._lock:
            self._held[item_id] = held
        return reverted

    # -- privacy -----------------------------------------------------------------------
    def purge(self, session_id: str) -> None:
        """Take a session out of every graph it wrote into (the atlas purged it): its own
        graph goes whole; from its user's graph goes what only it contributed, and a value
        it changed is back as it was (``ContextGraph.without_session``). Held and answered
        review items of its turns go too."""
        with self._lock:
            scopes = [scope for scope, seen in self._scopes.items() if session_id in seen]
            for scope in scopes:
                seen = self._scopes[scope]
                seen.pop(session_id, None)
                context = self._contexts.get(scope)
                if not seen or context is None:
                    self._drop(scope)
                    continue
                context.drop_session(session_id)
            self._user.pop(session_id, None)
            self._last.pop(session_id, None)
            self._forget_items(lambda held: held.session_id == session_id)

    def _drop(self, scope: str) -> None:
        """Forget a scope's graph and everything about it (lock held)."""
        self._contexts.pop(scope, None)
        self._turns.pop(scope, None)
        self._scopes.pop(scope, None)
        self._forget_items(lambda held: held.scope == scope)

    def _forget_items(self, doomed: Callable[[Held], bool]) -> None:
        for item in [i for i, held in self._held.items() if doomed(held)]:
            del self._held[item]
        for item in [i for i, (held, _) in self._answered.items() if doomed(held)]:
            del self._answered[item]

    def _on_event(self, event: AtlasEvent) -> None:
        if isinstance(event, SessionEnded) and event.mode == "purge" and event.session_id:
            self.purge(event.session_id)

    # -- the responder's context -------------------------------------------------------
    def describe(self, session_id: str, budget: int, user: str | None = None) -> str:
        """The active subgraph of the graph ``session_id`` reads (``scope``: its user's when
        it has one) as context lines, cut to ``budget`` tokens (0: nothing)."""
        scope = self.scope(session_id, user)
        with self._lock:
            context = self._contexts.get(scope)
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
