"""A/B tuning: the background job, its tables, and the page."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.config import preset
from memory_core.dashboard.demo import sample_files
from memory_core.dashboard.tuning import (
    TuningJob,
    TuningRequest,
    build_config,
    diff_rows,
    per_conversation_rows,
    swing_rows,
)
from memory_core.errors import ConfigError
from memory_core.testing import HashingEmbedder

from .test_pages import app, go  # noqa: F401 - fixture reuse

ROOT = Path(__file__).resolve().parents[3]
TRIP = ROOT / "sample_sessions" / "trip-approval.json"


def test_build_config_applies_overrides_on_the_preset_and_validates() -> None:
    cfg = build_config("seed-linear", {"decay_rate": 0.2})
    assert cfg.decay_strategy == preset("seed-linear").decay_strategy and cfg.decay_rate == 0.2
    with pytest.raises(ConfigError, match="decay_rate"):
        build_config("tuned", {"decay_rate": -1.0})
    with pytest.raises(ConfigError, match="preset"):
        build_config("nope", {})


def test_job_compares_two_arms_and_reports_progress() -> None:
    request = TuningRequest(
        (TRIP,), build_config("seed-linear", {}), build_config("tuned", {}), 0.25, 10
    )
    job = TuningJob(request, HashingEmbedder())
    job.wait(120)
    assert job.stage == "done" and job.error is None and job.progress == 1.0
    assert job.result is not None
    rows = {r["metric"]: r for r in diff_rows(job.result)}
    assert {"recall_at_k", "retention", "mrr"} <= set(rows)
    assert (
        rows["recall_at_k"]["CI low"]
        <= rows["recall_at_k"]["B − A"]
        <= rows["recall_at_k"]["CI high"]
    )
    assert {r["arm"] for r in per_conversation_rows(job.result)} == {"A", "B"}
    for row in swing_rows(job.result):
        assert row["only right in"] in ("A", "B")


def test_job_can_be_cancelled() -> None:
    request = TuningRequest(
        tuple(sample_files().values()),
        build_config("tuned", {}),
        build_config("tuned", {}),
        0.25,
        10,
    )
    job = TuningJob(request, HashingEmbedder())
    job.cancel()
    job.wait(120)
    assert job.stage in ("cancelled", "done")
    assert job.result is None or job.stage == "done"


def test_tuning_page_runs_an_ab_comparison(app: AppTest) -> None:  # noqa: F811
    go(app, "pages/ab_tuning.py")
    conversations = next(m for m in app.multiselect if m.label == "Conversations")
    conversations.set_value(["trip-approval"]).run()
    next(b for b in app.button if b.label == "Run A/B").click().run()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(
        s.value == "Paired differences (B − A)" for s in app.subheader
    ):
        time.sleep(0.5)
        app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(s.value == "Paired differences (B − A)" for s in app.subheader)
    assert any(b.label == "Export A as TOML" for b in app.get("download_button"))
