"""What the replay needs from a memory policy (``MemoryPolicy``) and what it hands back:
hits, held memories and the lifecycle trace explanations are built from."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved memory as the harness sees it."""

    id: str
    provenance: tuple[str, ...]
    score: float
    content: str = ""


@dataclass(frozen=True, slots=True)
class Held:
    """A memory still held; ``weight`` is the policy's own keep-worthiness (1.0 if it has none)."""

    id: str
    provenance: tuple[str, ...]
    weight: float


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """A memory leaving or being folded into another; what explanations are built from.

    ``kind`` is ``evicted`` (with ``reason``), ``merged`` (``node_id`` folded into
    ``into``) or ``summarized`` (``node_id`` covered by summary ``into``).
    """

    at: float
    kind: str
    node_id: str
    reason: str = ""
    into: str = ""
    weight: float = float("nan")
    content: str = ""


class MemoryPolicy(Protocol):
    """What the replay needs from a memory; see ``replay`` for the loop that drives it."""

    name: str
    trace: list[Lifecycle]

    def __len__(self) -> int: ...

    def add(
        self,
        text: str,
        vector: np.ndarray,
        *,
        turn_id: str,
        session_id: str,
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
    ) -> str:
        """Store one turn; returns the id of the memory that now carries it."""
        ...

    def retrieve(
        self,
        text: str,
        vector: np.ndarray,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
    ) -> list[Hit]:
        """Best ``top_k`` memories; ``reinforce=False`` must leave the state unchanged."""
        ...

    def end_session(self, session_id: str) -> None: ...

    def finish(self) -> None:
        """Housekeeping once the last turn was replayed, before the probes."""
        ...

    def held(self) -> list[Held]: ...

    def carrying(self, turn_ids: frozenset[str]) -> list[Held]:
        """Held memories whose provenance names any of ``turn_ids`` (cheap, for sampling)."""
        ...

    def evictions(self) -> dict[str, int]:
        """Counts by ``EvictionReason`` value."""
        ...


PolicyFactory = Callable[[AtlasConfig, Embedder, Clock], MemoryPolicy]
