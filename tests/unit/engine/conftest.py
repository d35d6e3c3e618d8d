"""Shared builders: every atlas here runs on the hashing embedder and a manual clock."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock

DIM = 64
START = 1_700_000_000.0

AtlasFactory = Callable[..., tuple[ElasticMemoryAtlas, ManualClock]]


def build(**overrides: Any) -> tuple[ElasticMemoryAtlas, ManualClock]:
    """An atlas with a deterministic clock; RAM-pressure eviction is off unless asked for."""
    overrides.setdefault("memory_watermark", 1.0)
    embedder = overrides.pop("embedder", None) or HashingEmbedder(DIM)
    kwargs = {
        k: overrides.pop(k) for k in ("importance", "summarizer", "write_filter") if k in overrides
    }
    clock = ManualClock(START)
    atlas = ElasticMemoryAtlas(AtlasConfig(**overrides), embedder=embedder, clock=clock, **kwargs)
    return atlas, clock


@pytest.fixture
def make_atlas() -> AtlasFactory:
    return build


class CountingEmbedder:
    """Hashing embedder that records every call (to prove batching and failure paths)."""

    def __init__(self, dim: int = DIM, *, fail: bool = False) -> None:
        self.inner = HashingEmbedder(dim)
        self.calls: list[list[str]] = []
        self.fail = fail

    @property
    def name(self) -> str:
        return "counting"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("model crashed")
        return self.inner.embed(texts)


def unit(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


def invariants(atlas: ElasticMemoryAtlas) -> None:
    """Graph nodes == vector-index ids == live table slots; weights within [floor, cap]
    (as every call sees them: after a vector insert an add left pending, engine.pending)."""
    atlas.settle()
    state = atlas._s
    alive = set(state.table.alive_slots().tolist())
    graph_nodes = set(state.edges.nodes().tolist())
    index_ids = set(state.vectors.ids().tolist())
    members: list[int] = []
    for session in state.sessions.values():
        listed = state.table.members(session.code).tolist()
        assert all(state.table.session[s] == session.code for s in listed)
        members += listed
    assert len(members) == len(set(members)), "a slot is listed in two sessions"
    assert graph_nodes == alive, graph_nodes ^ alive
    assert index_ids == alive, index_ids ^ alive
    assert set(members) == alive, set(members) ^ alive
    assert len(state.lexical) == len(alive)
    assert len(atlas) == len(alive)
    cfg = atlas.config
    weights = state.table.weight[sorted(alive)]
    assert np.all(weights >= cfg.weight_floor - 1e-9)
    assert np.all(weights <= cfg.weight_cap + 1e-9)
    for session in state.sessions.values():
        flagged = {
            str(state.table.ids[s])
            for s in state.session_slots(session).tolist()
            if state.table.working[s]
        }
        assert list(session.working) == list(dict.fromkeys(session.working))
        assert set(session.working) == flagged, "working tier out of sync"
        assert len(session.working) <= atlas.config.working_memory_size
    degree = state.table.degree[sorted(alive)]
    expected = [state.edges.degree(s) for s in sorted(alive)]
    assert degree.tolist() == expected
