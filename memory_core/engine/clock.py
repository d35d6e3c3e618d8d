"""Time sources. Every timestamp in the engine comes from a ``Clock`` so that the
harness can replay months of conversation in seconds and tests are exact."""

from __future__ import annotations

import math
import threading
import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from memory_core.errors import InputError


@runtime_checkable
class Clock(Protocol):
    """Anything that tells the current time in seconds since the Unix epoch."""

    def now(self) -> float: ...


class SystemClock:
    """Wall-clock time."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()


class ManualClock:
    """A clock that only moves when told to; thread-safe."""

    __slots__ = ("_lock", "_t")

    def __init__(self, start: float | datetime = 1_700_000_000.0) -> None:
        self._lock = threading.Lock()
        self._t = to_epoch(start)

    def now(self) -> float:
        return self._t

    def advance(self, seconds: float) -> float:
        """Move forward; moving backwards is refused (events must stay ordered)."""
        if not math.isfinite(seconds) or seconds < 0:
            raise InputError("seconds", f"must be a finite number >= 0, got {seconds!r}")
        with self._lock:
            self._t += seconds
            return self._t

    def set(self, when: float | datetime) -> float:
        """Jump to ``when`` if it is not in the past."""
        t = to_epoch(when)
        with self._lock:
            if t < self._t:
                raise InputError("when", f"{t} is before the current time {self._t}")
            self._t = t
            return self._t


def to_epoch(when: float | datetime) -> float:
    """Seconds since the epoch; naive datetimes are refused because they are ambiguous."""
    if isinstance(when, datetime):
        if when.tzinfo is None:
            raise InputError("when", "datetime must be timezone-aware")
        return when.timestamp()
    t = float(when)
    if not math.isfinite(t):
        raise InputError("when", f"must be finite, got {when!r}")
    return t


def to_datetime(epoch: float) -> datetime:
    """UTC-aware datetime for display and storage."""
    return datetime.fromtimestamp(epoch, tz=UTC)
