"""Test doubles shipped with the library: a fast fake embedder and a manual clock, plus
``atlas_differences`` to check that a copy (a follower, a restored snapshot) is exact.

``HashingEmbedder`` has no semantics beyond shared words; use it for unit tests of
mechanics, never to judge retrieval quality.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

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


__all__ = ["EventRecorder", "HashingEmbedder", "ManualClock", "atlas_differences", "wait_for"]
