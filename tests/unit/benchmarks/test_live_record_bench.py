"""The live-follow benchmark's harness at a toy size: the paired writes and phases run, the
follower in its own process ends equal to the agent, and every write gets a lag (no timing
asserted); the paired ratio's interval and verdict on made-up samples."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from benchmarks.live_record_bench import _lags, in_process, report
from benchmarks.paired_overhead import ratio_interval, verdict


def test_a_toy_run_follows_exactly_and_reports_every_number() -> None:
    result = in_process(300, 12, 0.0, 0.2, 3600.0, None, pairs=40)
    assert result["differences"] == 0, result["first_differences"]
    assert result["follower_reloads"] == 1 and result["follower_stalled"] is None
    assert math.isfinite(result["lag_max_s"])
    assert result["add_recorded"]["n"] == 40 == result["add_unrecorded"]["n"]
    text = report(result)
    assert "recording overhead (target <= 1.05x; 95 % interval over 40 pairs" in text
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


def test_the_ratio_interval_holds_the_ratio_and_judges_only_outside_it() -> None:
    rng = np.random.default_rng(3)
    base = rng.lognormal(0.0, 0.5, 600)
    same = ratio_interval(base, base, 99.0)
    assert (same.point, same.low, same.high) == (1.0, 1.0, 1.0)
    slower = ratio_interval(1.2 * base, base, 99.0).as_dict()
    assert slower["low"] == pytest.approx(1.2) == slower["high"]
    assert verdict(slower, 1.05) == "missed" and verdict(slower, 1.25) == "met"
    noisy = ratio_interval(base * rng.lognormal(0.0, 0.3, 600), base, 99.0).as_dict()
    assert noisy["low"] < noisy["point"] < noisy["high"]
    assert verdict(noisy, noisy["point"]) == "undecided"  # the point alone never decides


def test_the_interval_needs_enough_pairs() -> None:
    with pytest.raises(ValueError, match="pairs"):
        ratio_interval(np.ones(10), np.ones(10), 99.0)
