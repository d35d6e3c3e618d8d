"""A/B tuning: the background job, its tables and charts, and the page."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard.background import JobState
from memory_core.dashboard.demo import sample_files
from memory_core.dashboard.tuning import (
    ABRun,
    TuningJob,
    TuningRequest,
    build_config,
    default_facts,
    diff_rows,
    fact_choices,
    missed_rows,
    per_conversation_rows,
    swing_rows,
    trajectory_figure,
    trajectory_rows,
)
from memory_core.engine.config import preset
from memory_core.errors import ConfigError, NotFoundError
from memory_core.harness.session_format import load_conversation
from memory_core.store.engine import open_database
from memory_core.testing import HashingEmbedder

from .test_pages import app, go  # noqa: F401 - fixture reuse

ROOT = Path(__file__).resolve().parents[3]
TRIP = ROOT / "sample_sessions" / "trip-approval.json"
VERDICTS = {"outranked", "not_a_candidate", "evicted", "never_stored", "recalled"}


@pytest.fixture(scope="module")
def run() -> ABRun:
    request = TuningRequest(
        (TRIP,), build_config("seed-linear", {}), build_config("tuned", {}), 0.25, 10
    )
    job = TuningJob(request, HashingEmbedder())
    job.wait(120)
    assert job.stage == "done" and job.error is None and job.progress == 1.0
    assert job.result is not None
    return job.result


def test_build_config_applies_overrides_on_the_preset_and_validates() -> None:
    cfg = build_config("seed-linear", {"decay_rate": 0.2})
    assert cfg.decay_strategy == preset("seed-linear").decay_strategy and cfg.decay_rate == 0.2
    with pytest.raises(ConfigError, match="decay_rate"):
        build_config("tuned", {"decay_rate": -1.0})
    with pytest.raises(ConfigError, match="preset"):
        build_config("nope", {})


def test_job_compares_two_arms(run: ABRun) -> None:
    rows = {r["metric"]: r for r in diff_rows(run.comparison)}
    assert {"recall_at_k", "retention", "mrr"} <= set(rows)
    assert (
        rows["recall_at_k"]["CI low"]
        <= rows["recall_at_k"]["B − A"]
        <= rows["recall_at_k"]["CI high"]
    )
    assert {r["arm"] for r in per_conversation_rows(run.comparison)} == {"A", "B"}
    for row in swing_rows(run.comparison):
        assert row["only right in"] in ("A", "B")


def test_every_fact_not_as_expected_is_explained(run: ABRun) -> None:
    for arm, results in (("A", run.comparison.results_a), ("B", run.comparison.results_b)):
        wrong = {
            f.fact_id for r in results for f in r.facts if f.recalled != (f.expect == "recalled")
        }
        rows = missed_rows(run, arm)
        assert {r["fact_id"] for r in rows} == wrong and len(rows) == len(wrong)
        for row in rows:
            assert row["verdict"] in VERDICTS and row["why"]
            assert not re.search(r"\bm[0-9a-f]{6,}", row["why"])  # words, not memory ids
            if row["verdict"] == "outranked":
                assert row["rank"] > run.top_k and "above it came “" in row["why"]
            if row["expect"] == "forgotten":
                assert row["verdict"] == "recalled"
                assert row["why"].startswith("should be gone, but recalled at rank")
            if row["verdict"] == "evicted":
                assert "evicted" in row["why"] or "never stored" in row["why"]
    assert missed_rows(run, "A"), "seed-linear at 25% capacity forgets some trip facts"


def test_trajectories_cover_both_arms_over_simulated_time(run: ABRun) -> None:
    facts = default_facts(run, "trip-approval", limit=3)
    assert len(facts) == 3 and set(facts) <= set(fact_choices(run, "trip-approval"))
    swung = {s.fact_id for s in (*run.comparison.a_only, *run.comparison.b_only)}
    assert facts[: len(swung)] == [f for f in facts if f in swung]  # swings come first
    rows = trajectory_rows(run, "trip-approval", facts)
    turns = run.comparison.results_a[0].turns
    assert len(rows) == 2 * len(facts) * turns  # one sample per turn, fact and arm
    assert {r["arm"] for r in rows} == {"A", "B"} and {r["fact"] for r in rows} == set(facts)
    times = [r["time"] for r in rows if r["arm"] == "A" and r["fact"] == facts[0]]
    assert times == sorted(times) and times[0].tzinfo is not None
    figure = trajectory_figure(run, "trip-approval", facts)  # one panel per fact, A and B
    assert {t.name for t in figure.data} == {"A", "B"} and len(figure.data) == 2 * len(facts)
    assert len({t.yaxis for t in figure.data}) == len(facts)
    with pytest.raises(NotFoundError):
        trajectory_rows(run, "nope", facts)


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


def wait_for(app: AppTest, found, seconds: float = 120) -> None:  # type: ignore[no-untyped-def] # noqa: F811
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not found():
        time.sleep(0.5)
        app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert found()


def chart_titles(at: AppTest) -> list[str]:
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    return [str(s["layout"].get("title", {}).get("text", "")) for s in specs]


def test_tuning_page_runs_explains_saves_and_reopens(app: AppTest) -> None:  # noqa: F811
    go(app, "pages/ab_tuning.py")
    conversations = next(m for m in app.multiselect if m.label == "Conversations")
    conversations.set_value(["trip-approval"]).run()
    next(b for b in app.button if b.label == "Run A/B").click().run()
    wait_for(app, lambda: any(s.value == "Paired differences (B − A)" for s in app.subheader))
    assert any(b.label == "Export A as TOML" for b in app.get("download_button"))
    assert any(s.value == "Key-fact weight trajectories" for s in app.subheader)
    assert any(s.value == "Why facts were missed" for s in app.subheader)
    assert any("Arm A:" in str(m.value) for m in app.markdown)
    assert any(str(m.value).startswith("- **recall@k**: ") for m in app.markdown)  # verdict
    assert any("A and B differ in" in str(m.value) for m in app.markdown)
    next(b for b in app.button if b.label == "Apply B to live atlas").click().run()
    from memory_core.dashboard.ui.shared import live_system

    assert live_system().preset == "arm B (tuned)"
    assert any("key-fact weight over simulated time" in t for t in chart_titles(app))

    next(t for t in app.text_input if t.label == "Run name").set_value("trip seed vs tuned").run()
    save = next(b for b in app.button if b.label == "Save run")
    save.click().run()
    assert any("Saved as 'trip seed vs tuned'" in str(s.value) for s in app.success)

    del app.session_state["ab_run"]
    app.run()
    assert not any(s.value == "Paired differences (B − A)" for s in app.subheader)
    picker = next(s for s in app.selectbox if s.label == "Saved runs")
    assert "trip seed vs tuned · ab-tuning" in picker.options[0]
    next(b for b in app.button if b.label == "Open").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(s.value == "Paired differences (B − A)" for s in app.subheader)

    # A damaged row: a clear error on Open, the row stays and the page keeps working.
    db = open_database()
    try:
        bad = db.runs.add(name="damaged", policy="ab-tuning", params={"format": "x"}, metrics={})
        app.run()
        next(s for s in app.selectbox if s.label == "Saved runs").set_value(bad.id).run()
        next(b for b in app.button if b.label == "Open").click().run()
        assert not app.exception, [e.value for e in app.exception]
        assert any("saved run 'damaged'" in str(e.value) for e in app.error)
        assert db.runs.get(bad.id).params == {"format": "x"}
    finally:
        db.close()


def test_tuning_page_sweeps_and_fills_an_arm_from_a_trial(app: AppTest) -> None:  # noqa: F811
    go(app, "pages/ab_tuning.py")
    next(m for m in app.multiselect if m.label == "Sweep conversations").set_value(
        ["trip-approval"]
    ).run()
    next(n for n in app.number_input if n.label == "Trials").set_value(3).run()
    next(b for b in app.button if b.label == "Run sweep").click().run()
    wait_for(app, lambda: any(t.label == "Trial" for t in app.selectbox))
    assert any(b.label == "Export trial as TOML" for b in app.get("download_button"))
    outcome = app.session_state["sweep_outcome"]
    assert len(outcome.trials) == 3
    titles = chart_titles(app)
    assert any(t.endswith(f"3 trials, {len(outcome.pareto)} on the front") for t in titles)
    assert any(t.startswith("Parameter importance") for t in titles) or any(
        "Parameter importances need" in str(i.value) for i in app.info
    )
    if any(t.startswith("Parameter importance") for t in titles):  # too few trials to rank
        assert any("Only 3 trials: too few to rank" in str(w.value) for w in app.warning)
    number = next(s for s in app.selectbox if s.label == "Trial").value
    next(b for b in app.button if b.label == "Use as arm B").click().run()
    assert app.session_state["B_preset"] == "tuned"
    want = outcome.trial(number).params["decay_rate"]
    assert next(n for n in app.number_input if n.key == "B_tuned_decay_rate").value == want


def test_tuning_page_draws_the_front_while_the_sweep_runs(app: AppTest) -> None:  # noqa: F811
    go(app, "pages/ab_tuning.py")
    next(m for m in app.multiselect if m.label == "Sweep conversations").set_value(
        ["trip-approval"]
    ).run()
    next(n for n in app.number_input if n.label == "Trials").set_value(1000).run()
    next(b for b in app.button if b.label == "Run sweep").click().run()
    wait_for(app, lambda: any(m.label == "Best recall@k so far" for m in app.metric))
    assert any(" on the front" in t for t in chart_titles(app))  # the live Pareto scatter
    assert not any(t.startswith("Parameter importance") for t in chart_titles(app))
    next(b for b in app.button if b.label == "Stop sweep").click().run()
    wait_for(app, lambda: any(t.label == "Trial" for t in app.selectbox))
    assert not any(m.label == "Best recall@k so far" for m in app.metric)
    assert 1 <= len(app.session_state["sweep_outcome"].trials) < 1000


def test_verdict_sentences_say_what_and_whether_it_is_real() -> None:
    from memory_core.dashboard.tuning import verdict
    from memory_core.harness.compare import PairedDiff

    real = PairedDiff("recall_at_k", 30, 0.32, 0.55, 0.23, 0.05, 0.4, 0.04, "mcnemar")
    assert verdict(real) == (
        "**recall@k**: B recalls 23 points more key facts than A (55% against 32%), "
        "significant at p=0.04 — B is better."
    )
    noise = PairedDiff("forgetting_precision", 8, 0.5, 0.62, 0.12, -0.2, 0.4, 0.41, "mcnemar")
    assert verdict(noise).startswith("**forgetting precision**: no evidence of a difference")
    worse = PairedDiff("mrr", 30, 0.5, 0.3, -0.2, -0.3, -0.1, 0.001, "wilcoxon")
    assert "ranks key facts lower than A" in verdict(worse) and "A is better" in verdict(worse)


def test_differing_fields_lists_only_what_differs() -> None:
    from memory_core.dashboard.tuning import differing_fields

    rows = differing_fields(build_config("tuned", {}), build_config("tuned", {"decay_rate": 0.2}))
    assert [r["field"] for r in rows] == ["decay_rate"] and rows[0]["B"] == "0.2"
    assert differing_fields(build_config("tuned", {}), build_config("tuned", {})) == []


def test_a_failing_conversation_is_named_and_the_others_are_compared(tmp_path: Path) -> None:
    data = json.loads(TRIP.read_text())
    fact = data["key_facts"][0]
    fact["probe"] = "x" * 100_000  # over every arm's max_content_chars
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**data, "id": "broken-trip"}))
    others = [p for name, p in sample_files().items() if name != "trip-approval"][:1]
    request = TuningRequest(
        (broken, *others), build_config("tuned", {}), build_config("seed-linear", {}), 0.25, 10
    )
    job = TuningJob(request, HashingEmbedder())
    job.wait(120)
    assert job.state is JobState.DONE and job.error is None
    (failure,) = job.failures
    assert failure.startswith("conversation broken:") and f"key fact {fact['id']}" in failure
    assert "100000 characters" in failure and len(failure) < 400  # names, never echoes
    assert job.result is not None
    assert job.result.conversation_ids() == [load_conversation(others[0]).id]


def test_a_run_whose_every_conversation_fails_fails_with_each_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    request = TuningRequest((bad,), build_config("tuned", {}), build_config("tuned", {}), 0.25, 10)
    job = TuningJob(request, HashingEmbedder())
    job.wait(60)
    assert job.state is JobState.FAILED and job.result is None
    assert job.error is not None and "conversation bad" in job.error
