"""Clocks: the manual clock only moves forward, datetimes must be aware."""

from __future__ import annotations

import math
import threading
import time
from datetime import UTC, datetime

import pytest

from memory_core.engine.clock import Clock, ManualClock, SystemClock, to_datetime, to_epoch
from memory_core.errors import InputError


def test_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(100.0)
    assert clock.now() == 100.0
    assert clock.advance(5.5) == 105.5
    assert clock.now() == 105.5
    assert clock.set(200.0) == 200.0
    assert clock.set(200.0) == 200.0


@pytest.mark.parametrize("seconds", [-1.0, math.nan, math.inf])
def test_advance_refuses_backwards_or_non_finite(seconds: float) -> None:
    clock = ManualClock(100.0)
    with pytest.raises(InputError) as info:
        clock.advance(seconds)
    assert info.value.field == "seconds"
    assert clock.now() == 100.0


def test_set_refuses_the_past() -> None:
    clock = ManualClock(100.0)
    with pytest.raises(InputError) as info:
        clock.set(99.0)
    assert info.value.field == "when"
    assert clock.now() == 100.0


def test_datetimes_must_be_aware() -> None:
    aware = datetime(2026, 1, 1, tzinfo=UTC)
    assert ManualClock(aware).now() == aware.timestamp()
    assert to_datetime(to_epoch(aware)) == aware
    with pytest.raises(InputError, match="timezone-aware"):
        ManualClock(datetime(2026, 1, 1))
    with pytest.raises(InputError):
        to_epoch(math.nan)


def test_system_clock_is_wall_time() -> None:
    before = time.time()
    now = SystemClock().now()
    assert before <= now <= time.time()
    assert isinstance(SystemClock(), Clock)
    assert isinstance(ManualClock(), Clock)


def test_concurrent_advances_are_not_lost() -> None:
    clock = ManualClock(0.0)

    def work() -> None:
        for _ in range(2_000):
            clock.advance(1.0)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert clock.now() == 8_000.0
