"""The filters shared by every page: session, kind, minimum weight and a text search."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from memory_core.engine.model import MemoryKind, MemoryNode
from memory_core.errors import InputError


@dataclass(frozen=True, slots=True)
class NodeFilter:
    """Conditions combined with AND; empty tuples and ``None`` mean "any"."""

    sessions: tuple[str, ...] = ()
    kinds: tuple[MemoryKind, ...] = ()
    min_weight: float = 0.0
    text: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.sessions, str):
            raise InputError("sessions", "must be a tuple of session ids, not one string")
        if not math.isfinite(self.min_weight) or self.min_weight < 0:
            raise InputError("min_weight", f"must be a finite number >= 0, got {self.min_weight}")
        for kind in self.kinds:
            if not isinstance(kind, MemoryKind):
                raise InputError("kinds", f"{kind!r} is not one of {', '.join(MemoryKind)}")

    @property
    def active(self) -> bool:
        """True when at least one condition narrows the result."""
        return bool(self.sessions or self.kinds or self.min_weight > 0 or self.text.strip())

    def matches(self, node: MemoryNode) -> bool:
        needle = self.text.strip().casefold()
        return (
            (not self.sessions or node.session_id in self.sessions)
            and (not self.kinds or node.kind in self.kinds)
            and node.weight >= self.min_weight
            and (not needle or needle in node.content.casefold())
        )

    def apply(self, nodes: Iterable[MemoryNode]) -> list[MemoryNode]:
        return [n for n in nodes if self.matches(n)]
