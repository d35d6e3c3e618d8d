"""Test doubles shipped with the library: a fast fake embedder and a manual clock.

``HashingEmbedder`` has no semantics beyond shared words; use it for unit tests of
mechanics, never to judge retrieval quality.
"""

from memory_core.clock import ManualClock
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.events import AtlasEvent


class EventRecorder:
    """Subscriber that keeps every event, for assertions."""

    def __init__(self) -> None:
        self.events: list[AtlasEvent] = []

    def __call__(self, event: AtlasEvent) -> None:
        self.events.append(event)

    def of_type(self, name: str) -> list[AtlasEvent]:
        return [e for e in self.events if e.type == name]


__all__ = ["EventRecorder", "HashingEmbedder", "ManualClock"]
