"""A/B decay tuning: compare two parameter sets, sweep with Optuna, keep and reopen runs.

Thin page: replays run as ``TuningJob`` / ``SweepJob`` jobs in the server's job registry
(memory_core.dashboard.jobs), so a reload or a second browser re-attaches to them; a
fragment polls only while one runs. Saved runs go through memory_core.dashboard.run_library
into the database's ``runs`` table.
"""

from typing import Any

import plotly.express as px
import streamlit as st

from memory_core import PRESETS
from memory_core.dashboard import run_library
from memory_core.dashboard.access import Action
from memory_core.dashboard.background import BackgroundJob
from memory_core.dashboard.conversations import conversation_files
from memory_core.dashboard.demo import preset_description
from memory_core.dashboard.eviction_view import eviction_forecast
from memory_core.dashboard.jobs import AB_RUN, SWEEP, job_caption
from memory_core.dashboard.live import embedder_from_env, embedder_name
from memory_core.dashboard.study_storage import ALLOW_ANY_ENV, STORAGE_URLS_ENV, storage_choices
from memory_core.dashboard.sweep_view import (
    SweepJob,
    SweepOutcome,
    SweepRequest,
    arm_values,
    default_study_name,
    importance_caution,
    importance_figure,
    importance_note,
    pareto_figure,
    trial_table,
)
from memory_core.dashboard.tuning import (
    ARMS,
    COLUMN_HELP,
    EDITABLE_FIELDS,
    METRIC_HELP,
    ABRun,
    TuningJob,
    TuningRequest,
    build_config,
    default_facts,
    diff_rows,
    differing_fields,
    fact_choices,
    missed_rows,
    per_conversation_rows,
    selected_files,
    specs_by_field,
    swing_rows,
    trajectory_figure,
    verdict,
)
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import denied
from memory_core.dashboard.ui.shared import current_atlas, job_registry, live_system, viewer
from memory_core.errors import AtlasError

require_app_shell()

RUN_KEY, SWEEP_KEY = "ab_run", "sweep_outcome"
POLL_SECONDS = 1.0  # how often a running job's progress is redrawn (never when none runs)
SPECS = specs_by_field()
SWEEP_DEFAULT = (
    "decay_strategy",
    "decay_rate",
    "stability_hours",
    "reinforce_factor",
    "evict_threshold",
)
available = conversation_files()  # samples, then the data folder's conversations/
quick_first = sorted(available, key=lambda n: available[n].stat().st_size)  # fast first runs


def set_arm(label: str, preset_name: str, values: dict[str, Any]) -> None:
    """Fill arm ``label``'s form (a button callback: runs before the widgets exist)."""
    st.session_state[f"{label}_preset"] = preset_name
    for field, value in values.items():
        st.session_state[f"{label}_{preset_name}_{field}"] = value
    st.toast(f"Arm {label} now holds the trial's parameters (A/B comparison tab).")


def arm_form(label: str, default_preset: str) -> tuple[str, dict[str, Any]]:
    st.subheader(f"Arm {label}")
    presets = list(PRESETS)
    st.session_state.setdefault(f"{label}_preset", default_preset)
    name = st.selectbox("Preset", presets, key=f"{label}_preset")
    st.caption(preset_description(name))
    base = PRESETS[name]
    values: dict[str, Any] = {}
    for field in EDITABLE_FIELDS:
        spec, key = SPECS[field], f"{label}_{name}_{field}"
        current = getattr(base, field)
        if spec["choices"]:
            st.session_state.setdefault(key, current)
            values[field] = st.selectbox(field, spec["choices"], key=key, help=spec["doc"])
        elif isinstance(current, int) and not isinstance(current, bool):
            st.session_state.setdefault(key, int(current))
            values[field] = int(st.number_input(field, step=1, key=key, help=spec["doc"]))
        else:
            st.session_state[key] = float(st.session_state.get(key, current))
            values[field] = float(st.number_input(field, format="%.4f", key=key, help=spec["doc"]))
    return name, values


def ab_tab() -> None:
    names = st.multiselect("Conversations", list(available), default=quick_first[:3])
    left, right = st.columns(2)
    capacity = left.slider("Capacity (share of each conversation's turns)", 0.05, 1.0, 0.25, 0.05)
    top_k = right.slider("Probe top-k", 1, 20, 10)
    col_a, col_b = st.columns(2)
    with col_a:
        preset_a, values_a = arm_form("A", "seed-linear")
    with col_b:
        preset_b, values_b = arm_form("B", "tuned")
    configs = {}
    for label, name, values in (("A", preset_a, values_a), ("B", preset_b, values_b)):
        try:
            configs[label] = build_config(name, values)
        except AtlasError as exc:
            st.error(f"Arm {label}: {exc}")
    if len(configs) == 2:
        differ = differing_fields(configs["A"], configs["B"])
        if differ:
            st.markdown(f"**A and B differ in {len(differ)} fields**")
            st.dataframe(
                [{**row, "meaning": SPECS[row["field"]]["doc"]} for row in differ],
                hide_index=True, width="stretch",
            )  # fmt: skip
        else:
            st.warning("A and B are the same configuration: the comparison can only show noise.")
        dl_a, dl_b = st.columns(2)
        dl_a.download_button(
            "Export A as TOML", configs["A"].to_toml(), "arm-a.toml", "application/toml"
        )
        dl_b.download_button(
            "Export B as TOML", configs["B"].to_toml(), "arm-b.toml", "application/toml"
        )

    job = job_registry().latest(AB_RUN)
    running = job is not None and job.running
    run_col, stop_col = st.columns(2)
    can_run = len(configs) == 2 and bool(names) and not running
    autorun = st.session_state.pop("ab_autorun", False)  # the home page's sample A/B
    if run_col.button("Run A/B", type="primary", disabled=not can_run) or (autorun and can_run):
        request = TuningRequest(
            selected_files(names, available), configs["A"], configs["B"], capacity, top_k,
            (preset_a, preset_b),
        )  # fmt: skip
        try:
            job_registry().start(AB_RUN, lambda: TuningJob(request, embedder_from_env()), viewer())
        except AtlasError as exc:
            st.error(str(exc))
        else:
            st.rerun()
    if stop_col.button("Stop", disabled=not running) and job is not None:
        job.cancel()
    watch_job(AB_RUN, ab_progress)
    run: ABRun | None = st.session_state.get(RUN_KEY)
    if run is not None:
        show_ab(run)


def watch_job(kind: str, draw: Any) -> None:
    """Draw ``kind``'s newest job in a fragment that polls only while it runs; the
    polling stops (and the whole page redraws once, buttons included) when it ends."""
    job = job_registry().latest(kind)
    st.session_state[f"{kind}_polling"] = job is not None and job.running
    st.fragment(draw, run_every=POLL_SECONDS if job is not None and job.running else None)()


def job_status(kind: str, result_key: str, detail: str = "") -> BackgroundJob[Any] | None:
    """Progress, who started it, errors and failed units of ``kind``'s newest job; its
    result is adopted once per browser session (a reload shows a finished job's result)."""
    job = job_registry().latest(kind)
    if job is None:
        return None
    eta = job.eta_seconds()
    left = "estimating time left" if eta is None else f"about {eta:.0f} s left"
    st.progress(
        job.progress,
        text=f"{job.stage} · {detail or f'{job.progress:.0%}'}" + (f" · {left}" if job.running else ""),
    )  # fmt: skip
    st.caption(job_caption(job, viewer().viewer))
    if st.session_state.get(f"{kind}_dismissed") != job.id:
        if job.error:
            st.error(job.error)
        for failure in job.failures:
            st.warning(f"Left out: {failure}")
    if job.running:
        return job
    adopted = f"{result_key}_job"
    if st.session_state.get(adopted) != job.id:
        st.session_state[adopted] = job.id
        if job.result is not None:
            st.session_state[result_key] = job.result
        elif job.error:  # a failed run replaces nothing but must not pass for its result
            st.session_state.pop(result_key, None)
    if st.session_state.get(f"{kind}_polling"):  # it ended while this page polled
        st.session_state[f"{kind}_polling"] = False
        st.rerun()
    return job


def ab_progress() -> None:
    if job_status(AB_RUN, RUN_KEY) is None:
        st.info("Pick conversations and parameters, then press Run A/B.")


def show_ab(run: ABRun) -> None:
    comparison = run.comparison
    st.subheader("Verdict")
    for diff in comparison.diffs:
        st.markdown(f"- {verdict(diff, comparison.confidence)}", help=METRIC_HELP.get(diff.metric))
    apply_buttons(run)
    st.subheader("Paired differences (B − A)")
    rows = diff_rows(comparison)
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        column_config={
            "metric": st.column_config.TextColumn(
                help="; ".join(f"{k}: {v}" for k, v in METRIC_HELP.items())
            ),
            **{k: st.column_config.Column(help=v) for k, v in COLUMN_HELP.items()},
        },
    )
    shown = [
        r
        for r in rows
        if r["metric"] in ("recall_at_k", "retention", "mrr", "forgetting_precision")
    ]
    chart = px.bar(
        shown, x="metric", y="B − A",
        error_y=[r["CI high"] - r["B − A"] for r in shown],
        error_y_minus=[r["B − A"] - r["CI low"] for r in shown],
        title="B − A with confidence interval",
    )  # fmt: skip
    st.plotly_chart(chart, width="stretch")
    st.plotly_chart(
        px.bar(
            per_conversation_rows(comparison), x="conversation", y="recall_at_k", color="arm",
            barmode="group", title="Recall@k per conversation",
        ),
        width="stretch",
    )  # fmt: skip
    st.subheader("Key-fact weight trajectories")
    pick_conv, pick_facts = st.columns([1, 2])
    conversation = pick_conv.selectbox("Conversation", run.conversation_ids(), key="traj_conv")
    choices = fact_choices(run, conversation)
    facts = pick_facts.multiselect(
        "Key facts", list(choices), default=default_facts(run, conversation),
        format_func=choices.__getitem__, key=f"traj_facts_{conversation}",
    )  # fmt: skip
    if facts:
        st.caption("One panel per fact: A blue, B orange; a gap means no memory held the fact.")
        st.plotly_chart(trajectory_figure(run, conversation, facts), width="stretch")
    st.subheader("Facts one arm kept and the other lost")
    swings = swing_rows(comparison)
    if swings:
        st.dataframe(swings, hide_index=True, width="stretch")
    else:
        st.caption("Both arms got the same facts right.")
    st.subheader("Why facts were missed")
    for arm in ("A", "B"):
        missed = missed_rows(run, arm)
        st.markdown(f"**Arm {arm}: {len(missed)} facts not as expected**")
        if missed:
            st.dataframe(
                missed,
                hide_index=True,
                width="stretch",
                row_height=60,
                column_config={
                    "fact": st.column_config.TextColumn(width="medium"),
                    "why": st.column_config.TextColumn(width="large"),
                },
            )
    save_form("ab", lambda runs, name: run_library.save_ab(runs, name, run))


def apply_buttons(run: ABRun) -> None:
    """Put either arm's configuration on the live atlas (the demo and playground use it)."""
    system = live_system()
    blocked = denied(Action.WRITE)
    columns = st.columns(3, vertical_alignment="center")
    for column, arm, config in zip(columns, ARMS, (run.config_a, run.config_b), strict=False):
        name = f"arm {arm} ({run.presets[ARMS.index(arm)] or 'custom'})"
        if column.button(
            f"Apply {arm} to live atlas",
            key=f"apply_{arm}",
            disabled=blocked is not None,
            help=blocked or "The live atlas runs under this configuration from now on.",
        ):
            try:
                system.apply_preset(name, config)
            except AtlasError as exc:
                st.error(f"Not applied: {exc}")
            else:
                system.activity.record(viewer(), f"switched the preset to {name}", "preset")
                st.toast(f"The live atlas now runs {name}.")
    columns[2].caption(f"Live atlas runs: **{system.preset}**")


def save_form(kind: str, save: Any) -> None:
    name_col, button_col = st.columns([3, 1])
    name = name_col.text_input(
        "Run name", key=f"save_name_{kind}", placeholder="e.g. tuned vs seed, 25% capacity"
    )
    if button_col.button("Save run", key=f"save_{kind}", disabled=not name.strip()):
        try:
            record = save(run_library.runs_of(live_system().recording.db), name.strip())
        except AtlasError as exc:
            st.error(f"Not saved: {exc}")
        else:
            st.success(f"Saved as {record.name!r}.")


def sweep_tab() -> None:
    st.caption(
        "Optuna, two objectives: maximise key-fact recall@k, minimise memory size (final "
        "memories / turns). Other workers can join the study: `atlas sweep ... --storage URL --study NAME`."
    )
    names = st.multiselect("Sweep conversations", list(available), default=quick_first[:1])
    left, mid, right = st.columns(3)
    trials = int(left.number_input("Trials", min_value=1, max_value=1000, value=20, step=1))
    base = mid.selectbox("Base preset", list(PRESETS), index=list(PRESETS).index("tuned"))
    capacity = right.slider("Sweep capacity (share of turns)", 0.05, 1.0, 0.25, 0.05)
    params = st.multiselect("Fields to search", list(EDITABLE_FIELDS), default=list(SWEEP_DEFAULT))
    with st.expander("Study storage"):
        offered = {c.url: c.label for c in storage_choices()}
        storage = st.selectbox(
            "Storage", list(offered), format_func=offered.__getitem__, key="sweep_storage"
        )
        other = st.text_input(
            "Or another storage URL",
            key="sweep_storage_other",
            help=f"Refused unless the operator listed it in {STORAGE_URLS_ENV} or set "
            f"{ALLOW_ANY_ENV}=1.",
        )
        st.session_state.setdefault("sweep_study_name", default_study_name())
        study = st.text_input("Study name", key="sweep_study_name")
    job = job_registry().latest(SWEEP)
    running = job is not None and job.running
    run_col, stop_col = st.columns(2)
    if run_col.button("Run sweep", type="primary", disabled=running or not names):
        if job is not None and not job.running:  # its error must not stay under a new one
            st.session_state[f"{SWEEP}_dismissed"] = job.id
        try:
            request = SweepRequest(
                selected_files(names, available), base, tuple(params), trials, capacity, 10,
                other.strip() or storage or "", study, embedder_name(),
            )  # fmt: skip
        except AtlasError as exc:
            st.error(str(exc))
        else:
            try:
                job_registry().start(SWEEP, lambda: SweepJob(request), viewer())
            except AtlasError as exc:
                st.error(str(exc))
            else:
                del st.session_state["sweep_study_name"]  # the next sweep gets a fresh study
                st.rerun()
    if stop_col.button("Stop sweep", disabled=not running) and job is not None:
        job.cancel()
    watch_job(SWEEP, sweep_progress)
    outcome: SweepOutcome | None = st.session_state.get(SWEEP_KEY)
    if outcome is not None:
        show_sweep(outcome)


def sweep_progress() -> None:
    latest = job_registry().latest(SWEEP)
    if not isinstance(latest, SweepJob):
        return
    job = job_status(SWEEP, SWEEP_KEY, f"{latest.done} of {latest.request.trials} trials")
    if not isinstance(job, SweepJob):
        return
    partial = job.partial
    if job.running and partial is not None and partial.pareto:
        best = partial.best()
        st.metric(
            "Best recall@k so far", f"{best.recall_at_k:.3f}",
            help=f"trial #{best.number}, memory size {best.memory_fraction:.3f}",
        )  # fmt: skip
        st.plotly_chart(pareto_figure(partial), width="stretch", key="sweep_live_front")


def show_sweep(outcome: SweepOutcome) -> None:
    if not outcome.trials:
        st.warning("The sweep finished no trial.")
        return
    st.plotly_chart(pareto_figure(outcome), width="stretch")
    note = importance_note(outcome)
    if note:
        st.info(note)
    else:
        caution = importance_caution(outcome)
        if caution:
            st.warning(caution)
        st.plotly_chart(importance_figure(outcome), width="stretch")
    st.dataframe(trial_table(outcome), hide_index=True, width="stretch")
    numbers = [t.number for t in outcome.trials]
    pick, use_a, use_b, export = st.columns([2, 1, 1, 1])
    number = pick.selectbox(
        "Trial", numbers, index=numbers.index(outcome.pareto[0]) if outcome.pareto else 0,
        format_func=lambda n: f"#{n}" + (" (Pareto)" if n in outcome.pareto else ""),
    )  # fmt: skip
    values = arm_values(outcome, number, EDITABLE_FIELDS)
    for column, label in ((use_a, "A"), (use_b, "B")):
        column.button(
            f"Use as arm {label}", key=f"use_{label}", on_click=set_arm,
            args=(label, outcome.base_preset, values),
        )  # fmt: skip
    export.download_button(
        "Export trial as TOML",
        outcome.config(number).to_toml(),
        f"trial-{number}.toml",
        "application/toml",
    )
    save_form("sweep", lambda runs, name: run_library.save_sweep(runs, name, outcome))


def saved_runs_panel() -> None:
    try:
        runs = run_library.runs_of(live_system().recording.db)
        choices = run_library.saved_runs(runs)
    except AtlasError as exc:
        st.warning(f"Saved runs need the database: {exc}")
        return
    if not choices:
        st.caption(
            "No saved runs yet: run an A/B comparison or a sweep, name it and press Save run."
        )
        return
    pick, open_col, delete_col = st.columns([4, 1, 1])
    run_id = pick.selectbox("Saved runs", list(choices), format_func=choices.__getitem__)
    if open_col.button("Open"):
        try:
            opened = run_library.reopen(runs.get(run_id))
        except AtlasError as exc:
            st.error(str(exc))
        else:
            key = RUN_KEY if isinstance(opened, ABRun) else SWEEP_KEY
            st.session_state[key] = opened
            tab = "A/B comparison" if key == RUN_KEY else "Optuna sweep"
            st.success(f"Opened {choices[run_id]}: see the {tab} tab.")
    with delete_col.popover("Delete"):
        if st.button("Delete this run for good", type="primary"):
            runs.delete(run_id)
            st.rerun()


def forecast_tab() -> None:
    st.subheader("Forecast: what would be evicted if nobody touched the memory")
    atlas, label = current_atlas()
    f_left, f_right = st.columns(2)
    hours = f_left.slider("Horizon (hours)", 1, 24 * 14, 72)
    rate = f_right.slider("Decay rate", 0.0, 2.0, float(atlas.config.decay_rate), 0.01)
    if not len(atlas):
        st.caption(
            f"{label} is empty: play the demo or write in the playground to forecast its evictions."
        )
        return
    try:
        outlook = eviction_forecast(atlas, hours=float(hours), decay_rate=rate)
    except AtlasError as exc:
        st.error(str(exc))
        return
    st.plotly_chart(
        px.line(
            x=outlook.hours, y=outlook.remaining,
            labels={"x": "hours from now", "y": "memories left"},
            title=f"{label}: {len(outlook.evictions)} evictions forecast ({outlook.by_reason() or 'none'})",
        ),
        width="stretch",
    )  # fmt: skip
    st.dataframe(
        [
            {"in hours": round(e.hours, 1), "reason": e.reason, "weight now": round(e.weight_now, 3), "memory": e.content}
            for e in outlook.evictions[:200]
        ],
        hide_index=True,
        width="stretch",
    )  # fmt: skip


st.title("A/B tuning")
st.caption(
    "Replay conversations under two parameter sets and compare how many annotated key facts "
    "each still recalls (paired per fact: bootstrap confidence interval and a paired test); search "
    "the parameters with an Optuna sweep; save runs and reopen them later. Your own conversations "
    "(`atlas import locomo|longmemeval|openai-chat FILE --out data/conversations`) are listed as "
    "`yours/...` beside the samples."
)
with st.expander("Saved runs", expanded=False):
    saved_runs_panel()
ab, sweep_panel, outlook_panel = st.tabs(["A/B comparison", "Optuna sweep", "Forecast"])
with ab:
    ab_tab()
with sweep_panel:
    sweep_tab()
with outlook_panel:
    forecast_tab()
