"""Shared fixtures of the report tests."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks import report


@pytest.fixture
def no_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plots need a browser (seconds each) and are covered by the smoke test."""
    monkeypatch.setattr(report, "_plots", lambda *_: [])


@pytest.fixture
def machine() -> dict[str, Any]:
    """What ``measure.machine`` reports, made up."""
    return {
        "cpu": "test CPU",
        "cores": 2,
        "ram_gb": 1.0,
        "platform": "test",
        "python": "3.11",
        "numpy": "2",
        "faiss": "1",
        "networkx": "3",
        "load_avg": [0.0, 0.0, 0.0],
    }
