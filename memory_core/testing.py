"""Test doubles shipped with the library: a fast fake embedder and a manual clock, plus
``atlas_differences`` to check that a copy (a follower, a restored snapshot) is exact
and ``mixed_workload``, which makes every kind of change an atlas publishes.

``HashingEmbedder`` has no semantics beyond shared words; use it for unit tests of
mechanics, never to judge retrieval quality.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import numpy as np

from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.engine.events import AtlasEvent

if TYPE_CHECKING:
    from memory_core.engine.atlas import ElasticMemoryAtlas

_UNTRACKED_STATS = ("retrievals", "now", "embedder")
"""Stats a copy need not share: reads that reinforce nothing publish nothing, and a copy
keeps its own clock and embedder object."""


class EventRecorder:
    """Subscriber that keeps every event, for assertions."""

    def __init__(self) -> None:
        self.events: list[AtlasEvent] = []

    def __call__(self, event: AtlasEvent) -> None:
        self.events.append(event)

    def of_type(self, name: str) -> list[AtlasEvent]:
        return [e for e in self.events if e.type == name]


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds.

    For work another thread or process does on its own schedule (recorders, pollers).
    """
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def atlas_differences(a: ElasticMemoryAtlas, b: ElasticMemoryAtlas) -> list[str]:
    """Every way ``b`` differs from ``a``: memories field by field (vectors bit for bit),
    relations, sessions with their working tiers, and the stats; empty when exact."""
    found: list[str] = []
    nodes_a = {n.id: dataclasses.astuple(n) for n in a.nodes()}
    nodes_b = {n.id: dataclasses.astuple(n) for n in b.nodes()}
    for node_id in sorted(nodes_a.keys() | nodes_b.keys()):
        if nodes_a.get(node_id) != nodes_b.get(node_id):
            found.append(f"memory {node_id}: {nodes_a.get(node_id)} != {nodes_b.get(node_id)}")
        elif not np.array_equal(a.embedding_of(node_id), b.embedding_of(node_id)):
            found.append(f"memory {node_id}: embeddings differ")
    edges_a, edges_b = set(a.edges()), set(b.edges())
    found += [f"edge only in the first: {e}" for e in sorted(edges_a - edges_b, key=repr)]
    found += [f"edge only in the second: {e}" for e in sorted(edges_b - edges_a, key=repr)]
    if sorted(a.sessions()) != sorted(b.sessions()):
        found.append(f"sessions {sorted(a.sessions())} != {sorted(b.sessions())}")
    for session in sorted(set(a.sessions()) & set(b.sessions())):
        info_a, info_b = a.session_info(session), b.session_info(session)
        if info_a != info_b:
            found.append(f"session {session}: {info_a} != {info_b}")
    stats_a, stats_b = a.stats(), b.stats()
    for key in sorted(stats_a.keys() - set(_UNTRACKED_STATS)):
        same = (
            math.isclose(stats_a[key], stats_b[key], rel_tol=1e-12)  # summed in slot order
            if key == "weight_mean"
            else stats_a[key] == stats_b.get(key)
        )
        if not same:
            found.append(f"stats[{key}]: {stats_a[key]!r} != {stats_b.get(key)!r}")
    return found


class TickingClock:
    """Moves 1 ms on every read, like a wall clock: an event's ``at`` is never exactly the
    time its change was computed at (``ManualClock`` would hide that)."""

    __slots__ = ("t",)

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start

    def now(self) -> float:
        self.t += 0.001
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def mixed_agent(dim: int = 64) -> tuple[ElasticMemoryAtlas, TickingClock]:
    """A small atlas tuned so that ``mixed_workload`` reaches every kind of change:
    capacity evictions (60 memories at most), a working tier, orphans, links."""
    from memory_core.engine.atlas import ElasticMemoryAtlas
    from memory_core.engine.config import AtlasConfig

    clock = TickingClock()
    config = AtlasConfig(
        memory_watermark=1.0,
        max_nodes=60,
        working_memory_size=3,
        decay_interval_seconds=0,
        orphan_grace_hours=0.5,
        link_threshold=0.2,
    )
    return ElasticMemoryAtlas(config, embedder=HashingEmbedder(dim), clock=clock), clock


_WORDS = ("tea", "coffee", "deploy", "key", "friday", "lisbon", "peanut", "build", "server")


def _text(i: int) -> str:
    return " ".join(_WORDS[(i * k) % len(_WORDS)] for k in (1, 3, 5)) + f" note {i % 17}"


def mixed_workload(atlas: ElasticMemoryAtlas, clock: TickingClock, half: Literal[1, 2]) -> None:
    """Half 1: writes over four sessions (metadata, provenance, expiry, a duplicate folded
    into its twin). Half 2, after it: reads that reinforce, a link, pin, confidence,
    status changes, forget, delete, capacity evictions, a reconfigure, merges, a summary,
    sessions ended by fade, purge and keep, a decay pass with evictions, a late write."""
    if half == 1:
        for i in range(40):
            atlas.add(
                _text(i),
                session_id=f"s{i % 4}",
                metadata={"i": i},
                provenance=[f"turn-{i}"],
                ttl_hours=1.0 if i % 9 == 0 else None,
            )
            clock.advance(30)
        atlas.add(_text(3), session_id="s3")
        return
    ids = [n.id for n in atlas.nodes()]
    for query in ("tea lisbon", "deploy key", "peanut friday"):
        atlas.retrieve(query, top_k=4, cross_session=True)
    atlas.link(ids[0], ids[5], "causal", 0.7)
    atlas.pin(ids[1])
    atlas.set_confidence(ids[2], 0.4)
    atlas.set_status(ids[3], "deprecated", reason="stale")
    atlas.forget(ids[4])
    atlas.delete(ids[6])
    for i in range(40, 90):
        atlas.add(
            _text(i),
            session_id=f"s{i % 5}",
            links_to=[ids[1]] if i == 50 else None,
            ttl_hours=2.0 if i % 7 == 0 else None,
        )
        clock.advance(60)
    atlas.add(_text(88), session_id="s3", provenance=["again"])
    atlas.reconfigure(dataclasses.replace(atlas.config, merge_threshold=0.6))
    atlas.merge_duplicates()
    atlas.summarize_session("s1")
    atlas.end_session("s2", "fade")
    atlas.end_session("s0", "purge")
    atlas.end_session("s3", "keep")
    clock.advance(3 * 3600)
    atlas.decay()
    atlas.add("after the decay pass", session_id="s9", metadata={"late": True})
    atlas.retrieve("after the decay", top_k=2, session_id="s9")


__all__ = [
    "EventRecorder",
    "HashingEmbedder",
    "ManualClock",
    "TickingClock",
    "atlas_differences",
    "mixed_agent",
    "mixed_workload",
    "wait_for",
]
