"""Helpers shared by the reliability tests (atlases on the hashing embedder)."""

from __future__ import annotations

from typing import Any

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock

START = 1_700_000_000.0


def build(**overrides: Any) -> tuple[ElasticMemoryAtlas, ManualClock]:
    """A hashing-embedder atlas on a manual clock; RAM-pressure eviction off unless asked."""
    overrides.setdefault("memory_watermark", 1.0)
    embedder = overrides.pop("embedder", None) or HashingEmbedder(64)
    clock = ManualClock(START)
    return ElasticMemoryAtlas(AtlasConfig(**overrides), embedder=embedder, clock=clock), clock
