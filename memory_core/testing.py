"""Test doubles shipped with the library: a fast fake embedder and a manual clock.

``HashingEmbedder`` has no semantics beyond shared words; use it for unit tests of
mechanics, never to judge retrieval quality.
"""

import time
from collections.abc import Callable

from memory_core.embedding.hashing import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.engine.events import AtlasEvent


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


__all__ = ["EventRecorder", "HashingEmbedder", "ManualClock", "wait_for"]
