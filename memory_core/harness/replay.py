"""Replay a conversation through a memory policy, the way an agent would use it.

Each turn goes through the agent loop (``memory_core.agent.loop.TurnLoop``) with the
policy as its memory and no responder, on a simulated clock:

1. set the ``ManualClock`` to the turn's time (sessions months apart are months apart);
2. the loop recalls the ``context_k`` best memories with the turn's text (as stored: with
   its speaker, see ``memory_text``) as the query — an access, so hits are reinforced;
   scoped to the turn's session plus other sessions. For the ``atlas`` policies with
   ``entity_route`` and ``context_graph`` on, the loop keeps a task context graph of the
   turns and hints the memories that mention what the query names, as an agent's loop
   does (``agent/entity_route.py``);
3. if a write filter is given and declines the turn, stop here;
4. the loop stores the turn with provenance ``(turn id,)`` and ``links_to`` the
   ``link_top`` best hits still held; the atlas itself runs its decay pass whenever
   ``decay_interval_seconds`` passed and evicts at ``max_nodes``. With
   ``ReplaySettings.rules`` (``atlas`` policies only) the orchestrator's rules run around
   the store as they do for an agent; off by default, so a replay measures the memory;
5. every ``trajectory_every`` turns, sample each key fact's best weight.

A recorded conversation (``atlas import recording``) carries the agent's own reads: they
replace step 2 (no simulated read, so no links either) and run at their recorded times,
after the turns said until then, each a retrieve with the agent's query, ``top_k``,
session and reinforcement; what comes back is scored as agreement@k (``metrics``).

After the last turn of a session the policy's session-end action runs (the atlas uses
``session_end_mode``). After the last session the policy settles (the atlas runs one
decay pass), then every key fact's probe is recalled through the loop (``top_k``
memories, read-only, over all sessions, with the entity route when it is on), and
``metrics`` scores them.

All texts of a conversation are embedded once, through the (cached) embedder, and the
vectors are passed to the policy, so a re-run under new parameters only replays. Same
conversation, configuration, settings and ``config.seed`` give identical results.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memory_core.agent.attribution import attributed
from memory_core.agent.context_graph import ContextStage
from memory_core.agent.entity_route import EntityRoute
from memory_core.agent.loop import TurnLoop
from memory_core.agent.remember import everything
from memory_core.agent.rules import Orchestrator
from memory_core.conflicts.detector import played_user, user_metadata
from memory_core.embedding.base import Embedder, embed_checked
from memory_core.embedding.registry import make_embedder
from memory_core.engine.atlas import WriteFilter
from memory_core.engine.clock import ManualClock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.validate import is_count
from memory_core.errors import InputError
from memory_core.harness.guarded_policy import GuardedAtlasPolicy
from memory_core.harness.metrics import (
    ConversationResult,
    EvidenceIndex,
    FactOutcome,
    ReadOutcome,
    first_rank,
    none_if_nan,
    read_outcome,
    weight_percentiles,
)
from memory_core.harness.policies import POLICIES, AtlasPolicy, Hit, MemoryPolicy, make_policy
from memory_core.harness.session_format import Conversation, RecordedRead, Turn


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplaySettings:
    """How the simulated agent uses its memory (not engine parameters: those are config).

    ``capacity_fraction`` sets ``max_nodes`` per conversation to that share of its turns
    (rounded up), so one setting forces forgetting on short and long conversations alike.
    """

    policy: str = "atlas"
    top_k: int = 10
    context_k: int = 5
    link_top: int = 3
    trajectory_every: int = 1
    capacity_fraction: float | None = None
    conflicts: bool = False
    """Writes go through a ``ConflictGuard`` with automatic resolution (``atlas`` only)."""
    rules: bool = False
    """Run the agent loop's orchestrator rules (episodes, knowledge review after
    corrections, forget requests) with the config's thresholds (``atlas`` only). Off by
    default: they change what is stored, so the measured numbers would change."""

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise InputError("policy", f"must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        for name in ("top_k", "context_k", "trajectory_every"):
            value = getattr(self, name)
            if not is_count(value):
                raise InputError(name, f"must be an integer >= 1, got {value!r}")
        if isinstance(self.link_top, bool) or not isinstance(self.link_top, int):
            raise InputError("link_top", f"must be an integer >= 0, got {self.link_top!r}")
        if not 0 <= self.link_top <= self.context_k:
            raise InputError("link_top", f"must be in [0, context_k={self.context_k}]")
        fraction = self.capacity_fraction
        if fraction is not None and not (
            isinstance(fraction, (int, float)) and 0 < fraction <= 1 and math.isfinite(fraction)
        ):
            raise InputError("capacity_fraction", f"must be in (0, 1], got {fraction!r}")
        if self.conflicts and self.policy != "atlas":
            raise InputError("conflicts", f"needs policy 'atlas', got {self.policy!r}")
        if self.rules and self.policy != "atlas":
            raise InputError("rules", f"needs policy 'atlas', got {self.policy!r}")

    def config_for(self, conversation: Conversation, config: AtlasConfig) -> AtlasConfig:
        """The configuration a conversation runs under (capacity fraction applied)."""
        if self.capacity_fraction is None:
            return config
        turns = sum(len(s.turns) for s in conversation.sessions)
        return replace(config, max_nodes=max(1, math.ceil(self.capacity_fraction * turns)))


@dataclass(frozen=True, slots=True)
class Progress:
    """Reported after every turn: which conversation, how far."""

    conversation_id: str
    conversation: int  # 0-based index in the run
    conversations: int
    turn: int  # turns done in this conversation
    turns: int


ProgressCallback = Callable[[Progress], None]


@dataclass(slots=True)
class Replay:
    """A finished replay: the measured result and the policy in its final state."""

    result: ConversationResult
    policy: MemoryPolicy
    vectors: dict[str, np.ndarray]
    config: AtlasConfig
    conversation: Conversation
    stored: dict[str, str]  # turn id -> id of the memory it was first stored as


def memory_text(turn: Turn) -> str:
    """What a turn is stored as: the utterance with who said it (``attribution``)."""
    return attributed(turn.text, turn.speaker)


class PolicyMemory:
    """A harness policy as the agent loop's ``TurnMemory[Hit, str]``: recalls with the
    precomputed vectors, stores with the turn id (the provenance's one entry)."""

    __slots__ = ("policy",)

    def __init__(self, policy: MemoryPolicy) -> None:
        self.policy = policy

    def recall(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
        options: Mapping[str, Any],
    ) -> list[Hit]:
        hints = options.get("hints")
        if hints and isinstance(self.policy, AtlasPolicy):
            return self.policy.retrieve(
                text, _known(vector), top_k=top_k, session_id=session_id, reinforce=reinforce,
                hints=hints,
            )  # fmt: skip
        return self.policy.retrieve(
            text, _known(vector), top_k=top_k, session_id=session_id, reinforce=reinforce
        )

    def store(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        session_id: str,
        provenance: tuple[str, ...],
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
        options: Mapping[str, Any],
    ) -> str:
        (turn_id,) = provenance
        return self.policy.add(
            text,
            _known(vector),
            turn_id=turn_id,
            session_id=session_id,
            links_to=links_to,
            metadata=metadata,
        )

    def hit_id(self, hit: Hit) -> str:
        return hit.id

    def stored_id(self, stored: str) -> str:
        return stored


def _known(vector: np.ndarray | None) -> np.ndarray:
    if vector is None:  # the replay embeds every text up front
        raise InputError("vector", "a replay passes every text's precomputed vector")
    return vector


def conversation_texts(conversation: Conversation) -> list[str]:
    """Every text a replay embeds: turns and probes, each once, in first-seen order."""
    texts = [memory_text(t) for t in conversation.turns()]
    texts += [f.probe for f in conversation.key_facts]
    texts += [r.query for r in conversation.reads or ()]
    return list(dict.fromkeys(texts))


def embed_conversation(conversation: Conversation, embedder: Embedder) -> dict[str, np.ndarray]:
    """Vectors of all the conversation's texts, from one embedder call."""
    texts = conversation_texts(conversation)
    vectors = embed_checked(embedder, texts)
    return dict(zip(texts, vectors, strict=True))


def replay_conversation(
    conversation: Conversation,
    config: AtlasConfig,
    *,
    settings: ReplaySettings | None = None,
    embedder: Embedder | None = None,
    vectors: Mapping[str, np.ndarray] | None = None,
    write_filter: WriteFilter | None = None,
    progress: ProgressCallback | None = None,
    position: tuple[int, int] = (0, 1),
) -> Replay:
    """Run the loop described in the module docstring over one conversation."""
    settings = settings or ReplaySettings()
    embedder = embedder or make_embedder()
    if vectors is None:
        vectors = embed_conversation(conversation, embedder)
    run_config = settings.config_for(conversation, config)
    turns = sum(len(s.turns) for s in conversation.sessions)
    clock = ManualClock(conversation.sessions[0].started_at)
    policy = (
        GuardedAtlasPolicy(run_config, embedder, clock)
        if settings.conflicts
        else make_policy(settings.policy, run_config, embedder, clock)
    )
    loop = _turn_loop(policy, settings, write_filter)
    index = EvidenceIndex(conversation.key_facts)
    samples: list[np.ndarray] = []
    sample_times: list[float] = []
    stored: dict[str, str] = {}
    reads = _reads_by_position(conversation)

    started = time.perf_counter()
    done = 0
    read_outcomes = _replay_reads(policy, clock, vectors, reads.get(0, ()))
    user = user_metadata(played_user("replay", conversation.id))
    for session in conversation.sessions:
        for turn in session.turns:
            clock.set(max(turn.at, clock.now()))
            text = memory_text(turn)
            vector = vectors[text]
            kept = loop.turn(
                turn.text,
                session_id=session.id,
                top_k=settings.context_k,
                recall=conversation.reads is None,  # a recording brings its own reads
                query=text,
                query_vector=vector,
                vector=vector,
                provenance=(turn.id,),
                metadata={"speaker": turn.speaker, **user},
            ).done
            if kept.stored is not None:
                stored[turn.id] = kept.stored
            done += 1
            read_outcomes += _replay_reads(policy, clock, vectors, reads.get(done, ()))
            if done % settings.trajectory_every == 0:
                samples.append(index.best_weights(policy.carrying(index.turns)))
                sample_times.append(clock.now())
            if progress is not None:
                progress(Progress(conversation.id, position[0], position[1], done, turns))
        policy.end_session(session.id)
    policy.finish()

    outcomes = _probe(loop, policy, conversation, vectors, index, settings.top_k, samples)
    result = ConversationResult(
        conversation_id=conversation.id,
        policy=settings.policy,
        turns=turns,
        max_nodes=run_config.max_nodes,
        top_k=settings.top_k,
        facts=outcomes,
        final_nodes=len(policy),
        evictions=policy.evictions(),
        wall_seconds=time.perf_counter() - started,
        trajectory_times=tuple(sample_times),
        reads=tuple(read_outcomes),
    )
    return Replay(result, policy, dict(vectors), run_config, conversation, stored)


def _reads_by_position(conversation: Conversation) -> dict[int, list[RecordedRead]]:
    """Recorded reads keyed by how many turns were said before them (a tie: the turn first)."""
    times = [t.at for t in conversation.turns()]
    by_position: dict[int, list[RecordedRead]] = {}
    for read in conversation.reads or ():
        by_position.setdefault(bisect_right(times, read.at), []).append(read)
    return by_position


def _replay_reads(
    policy: MemoryPolicy,
    clock: ManualClock,
    vectors: Mapping[str, np.ndarray],
    reads: Iterable[RecordedRead],
) -> list[ReadOutcome]:
    """Run recorded reads at their times as the agent did; which of its memories came back."""
    outcomes = []
    for read in reads:
        clock.set(max(read.at, clock.now()))
        hits = policy.retrieve(
            read.query,
            vectors[read.query],
            top_k=read.top_k,
            session_id=read.session,
            reinforce=read.reinforce,
        )
        outcomes.append(read_outcome(read.id, read.at, read.top_k, read.returned, hits))
    return outcomes


def _turn_loop(
    policy: MemoryPolicy, settings: ReplaySettings, write_filter: WriteFilter | None
) -> TurnLoop[Hit, str]:
    atlas = policy.atlas if isinstance(policy, AtlasPolicy) else None
    rules = Orchestrator(atlas) if settings.rules and atlas is not None else None
    # without rules the entity route keeps its own context graph (it does nothing while
    # the config has it off, so such replays are as before)
    route = EntityRoute(ContextStage(atlas)) if atlas is not None and rules is None else None
    return TurnLoop(
        PolicyMemory(policy),
        remember=write_filter or everything,
        link_top=settings.link_top,
        rules=rules,
        entities=route,
    )


def replay_all(
    conversations: Sequence[Conversation],
    config: AtlasConfig,
    *,
    settings: ReplaySettings | None = None,
    embedder: Embedder | None = None,
    write_filter: WriteFilter | None = None,
    progress: ProgressCallback | None = None,
) -> list[ConversationResult]:
    """Replay each conversation independently (a fresh memory each) and collect results."""
    embedder = embedder or make_embedder()
    return [
        replay_conversation(
            conversation,
            config,
            settings=settings,
            embedder=embedder,
            write_filter=write_filter,
            progress=progress,
            position=(i, len(conversations)),
        ).result
        for i, conversation in enumerate(conversations)
    ]


def _probe(
    loop: TurnLoop[Hit, str],
    policy: MemoryPolicy,
    conversation: Conversation,
    vectors: Mapping[str, np.ndarray],
    index: EvidenceIndex,
    top_k: int,
    samples: Iterable[np.ndarray],
) -> tuple[FactOutcome, ...]:
    held = policy.held()
    best = index.best_weights(held)
    percentiles = weight_percentiles(best, held)
    series = np.array(list(samples)) if samples else np.empty((0, len(index.facts)))
    trajectories = series.T.tolist()  # each fact's sampled weights, as Python floats
    outcomes = []
    for i, fact in enumerate(conversation.key_facts):
        hits = loop.recall(
            fact.probe, session_id=None, top_k=top_k, vector=vectors[fact.probe], reinforce=False
        )
        outcomes.append(
            FactOutcome(
                fact_id=fact.id,
                fact=fact.fact,
                expect=fact.expect,
                rank=first_rank(hits, fact.evidence),
                retained=not math.isnan(best[i]),
                weight=none_if_nan(best[i]),
                weight_percentile=none_if_nan(percentiles[i]),
                hits=tuple(h.id for h in hits),
                trajectory=tuple([None if v != v else v for v in trajectories[i]]),  # NaN: None
            )
        )
    return tuple(outcomes)
