"""The live-follow benchmark's harness at a toy size: the blocks and phases run, the follower in its
own process ends equal to the agent, and every write gets a lag (no timing asserted)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.live_record_bench import _lags, in_process, report


def test_a_toy_run_follows_exactly_and_reports_every_number() -> None:
    result = in_process(300, 12, 0.0, 0.2, 3600.0, None)
    assert result["differences"] == 0, result["first_differences"]
    assert result["follower_reloads"] == 1 and result["follower_stalled"] is None
    assert math.isfinite(result["lag_max_s"])
    assert result["add_recorded"]["n"] == 12 == result["add_unrecorded"]["n"]
    text = report(result)
    assert "follower lag write -> copy" in text and "differs from the agent's atlas in 0" in text
    assert "add p99 while checkpoints run" in text
    holds = result["checkpoint_holds"]
    assert holds["add_during"]["n"] == 12  # the whole --writes phase
    if Path("/proc/self/task").is_dir():  # Linux: each add's blocked time was measured
        assert holds["add_blocked_p99_ms"] >= 0.0
    assert "blocked (waiting for the GIL, a lock or I/O, not for a core)" in text


def test_lag_is_the_first_poll_holding_the_write() -> None:
    polls = [(3, 10.5, 0.1), (7, 11.2, 0.1), (9, 12.0, 0.1)]
    assert _lags([(2, 10.0), (5, 10.4), (9, 11.9)], polls) == pytest.approx([0.5, 0.8, 0.1])
    assert _lags([(10, 10.0)], polls) == [math.inf]
