"""Who changed the shared live atlas last, and a version counter for the pages that show it.

The live atlas, its demo player and its preset are one per server: every browser session
sees and changes the same ones. Each change a page makes is recorded here (who, what,
when); ``version`` moves with it, with the player's state and with the preset, so a
page's watch — a fragment that reads one tuple — knows when it must redraw without
re-reading the atlas. Turns the demo thread plays are not recorded one by one: the
player's own status says how far it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from memory_core.dashboard.background import Actor


@dataclass(frozen=True, slots=True)
class Change:
    """One change to the shared live atlas."""

    actor: Actor
    action: str
    """What was done, as a verb phrase: "pressed Play", "switched the preset to tuned"."""
    at: float
    """Wall-clock epoch seconds."""
    topic: str = ""
    """What it was about ("demo", "preset", "memories"), to ask for the last of a kind."""


class SharedActivity:
    """The newest change to the shared live atlas and a counter of all of them."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._count = 0
        self._last: Change | None = None
        self._by_topic: dict[str, Change] = {}

    def record(self, actor: Actor, action: str, topic: str = "") -> Change:
        change = Change(actor, action, self._clock(), topic)
        with self._lock:
            self._count += 1
            self._last = change
            if topic:
                self._by_topic[topic] = change
        return change

    def last_of(self, topic: str) -> Change | None:
        with self._lock:
            return self._by_topic.get(topic)

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    @property
    def last(self) -> Change | None:
        with self._lock:
            return self._last

    def describe(self, viewer: str, now: float | None = None) -> str:
        """ "Last change: you pressed Play · 12 s ago" (or that nothing changed yet)."""
        last = self.last
        if last is None:
            return "No change by anyone yet."
        return (
            f"Last change: {last.actor.seen_by(viewer)} {last.action} · "
            f"{ago((now if now is not None else self._clock()) - last.at)}"
        )


def ago(seconds: float) -> str:
    """A short "how long ago" for captions."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"
