"""Builders for the conflict-resolution tests: hashing embedder, manual clock, claim judge."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.conflicts import make_judge
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.policy import ResolutionPolicy
from memory_core.conflicts.queue import InMemoryReviewQueue

START = 1_700_000_000.0


def new_atlas(**config: Any) -> ElasticMemoryAtlas:
    config.setdefault("memory_watermark", 1.0)
    return ElasticMemoryAtlas(
        AtlasConfig(**config), embedder=HashingEmbedder(64), clock=ManualClock(START)
    )


def new_guard(atlas: ElasticMemoryAtlas | None = None, **policy: Any) -> ConflictGuard:
    return ConflictGuard(
        atlas if atlas is not None else new_atlas(),
        make_judge(slots=False),  # no MiniLM in unit tests: the slot layer has its own
        ResolutionPolicy(**policy),
        InMemoryReviewQueue(),
    )


def later(atlas: ElasticMemoryAtlas, seconds: float = 60.0) -> None:
    clock = atlas.clock
    assert isinstance(clock, ManualClock)
    clock.advance(seconds)


@pytest.fixture
def atlas() -> ElasticMemoryAtlas:
    return new_atlas()


@pytest.fixture
def guard(atlas: ElasticMemoryAtlas) -> ConflictGuard:
    return new_guard(atlas)


@pytest.fixture
def make_atlas() -> Any:
    return new_atlas


@pytest.fixture
def make_guard() -> Any:
    return new_guard


@pytest.fixture
def tick() -> Any:
    return later
