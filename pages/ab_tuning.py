"""A/B decay tuning: replay sample conversations under two parameter sets and compare.

Thin page: the replay runs in a ``TuningJob`` thread (memory_core.dashboard.tuning);
a fragment polls it so the page stays responsive and Stop works.
"""

from typing import Any

import plotly.express as px
import streamlit as st

from memory_core.config import PRESETS, AtlasConfig, field_specs
from memory_core.dashboard.demo import sample_files
from memory_core.dashboard.live import embedder_from_env
from memory_core.dashboard.shared import current_atlas
from memory_core.dashboard.tuning import (
    EDITABLE_FIELDS,
    TuningJob,
    TuningRequest,
    build_config,
    diff_rows,
    per_conversation_rows,
    selected_files,
    swing_rows,
)
from memory_core.errors import AtlasError
from memory_core.harness.forecast import forecast

JOB_KEY = "ab_tuning_job"
SPECS = {s["name"]: s for s in field_specs()}

st.title("A/B tuning")
st.caption(
    "Replay scripted conversations under two parameter sets and compare how many annotated key facts "
    "each still recalls (paired per fact: bootstrap confidence interval and a paired test)."
)

available = sample_files()
names = st.multiselect("Conversations", list(available), default=list(available)[:3])
left, right = st.columns(2)
capacity = left.slider("Capacity (share of each conversation's turns)", 0.05, 1.0, 0.25, 0.05)
top_k = right.slider("Probe top-k", 1, 20, 10)


def arm_form(label: str, column: Any, default_preset: str) -> tuple[str, dict[str, Any]]:
    with column:
        st.subheader(f"Arm {label}")
        name = st.selectbox(
            "Preset",
            list(PRESETS),
            index=list(PRESETS).index(default_preset),
            key=f"{label}_preset",
        )
        base = PRESETS[name]
        values: dict[str, Any] = {}
        for field in EDITABLE_FIELDS:
            spec, current = SPECS[field], getattr(base, field)
            key = f"{label}_{name}_{field}"
            if spec["choices"]:
                values[field] = st.selectbox(
                    field,
                    spec["choices"],
                    index=spec["choices"].index(current),
                    key=key,
                    help=spec["doc"],
                )
            elif isinstance(current, int) and not isinstance(current, bool):
                values[field] = int(
                    st.number_input(field, value=current, step=1, key=key, help=spec["doc"])
                )
            else:
                values[field] = float(
                    st.number_input(
                        field, value=float(current), format="%.4f", key=key, help=spec["doc"]
                    )
                )
        return name, values


col_a, col_b = st.columns(2)
preset_a, values_a = arm_form("A", col_a, "seed-linear")
preset_b, values_b = arm_form("B", col_b, "tuned")

configs = {}
for label, name, values in (("A", preset_a, values_a), ("B", preset_b, values_b)):
    try:
        configs[label] = build_config(name, values)
    except AtlasError as exc:
        st.error(f"Arm {label}: {exc}")
if len(configs) == 2:
    dl_a, dl_b = st.columns(2)
    dl_a.download_button(
        "Export A as TOML", configs["A"].to_toml(), "arm-a.toml", "application/toml"
    )
    dl_b.download_button(
        "Export B as TOML", configs["B"].to_toml(), "arm-b.toml", "application/toml"
    )

job: TuningJob | None = st.session_state.get(JOB_KEY)
run_col, stop_col = st.columns(2)
can_run = len(configs) == 2 and bool(names) and not (job and job.running)
if run_col.button("Run A/B", type="primary", disabled=not can_run):
    request = TuningRequest(
        selected_files(names, available), configs["A"], configs["B"], capacity, top_k
    )
    st.session_state[JOB_KEY] = TuningJob(request, embedder_from_env())
    st.rerun()
if stop_col.button("Stop", disabled=not (job and job.running)):
    job.cancel()  # type: ignore[union-attr]


@st.fragment(run_every=1.0)
def show_progress() -> None:
    current: TuningJob | None = st.session_state.get(JOB_KEY)
    if current is None:
        st.info("Pick conversations and parameters, then press Run A/B.")
        return
    st.progress(current.progress, text=f"{current.stage} · {current.progress:.0%}")
    if current.error:
        st.error(current.error)
    if (
        not current.running
        and current.result is not None
        and st.session_state.get("ab_shown") is not current
    ):
        st.session_state["ab_shown"] = current
        st.rerun()


show_progress()

job = st.session_state.get(JOB_KEY)
if job is not None and not job.running and job.result is not None:
    comparison = job.result
    st.subheader("Paired differences (B − A)")
    rows = diff_rows(comparison)
    st.dataframe(rows, hide_index=True, width="stretch")
    shown = [
        r
        for r in rows
        if r["metric"] in ("recall_at_k", "retention", "mrr", "forgetting_precision")
    ]
    chart = px.bar(
        shown,
        x="metric",
        y="B − A",
        error_y=[r["CI high"] - r["B − A"] for r in shown],
        error_y_minus=[r["B − A"] - r["CI low"] for r in shown],
        title="B − A with confidence interval",
    )
    st.plotly_chart(chart, width="stretch")
    st.plotly_chart(
        px.bar(
            per_conversation_rows(comparison),
            x="conversation",
            y="recall_at_k",
            color="arm",
            barmode="group",
            title="Recall@k per conversation",
        ),
        width="stretch",
    )
    st.subheader("Facts one arm kept and the other lost")
    swings = swing_rows(comparison)
    if swings:
        st.dataframe(swings, hide_index=True, width="stretch")
    else:
        st.caption("Both arms got the same facts right.")

st.divider()
st.subheader("Forecast: what would be evicted if nobody touched the memory")
atlas, label = current_atlas()
f_left, f_right = st.columns(2)
hours = f_left.slider("Horizon (hours)", 1, 24 * 14, 72)
rate = f_right.slider("Decay rate", 0.0, 2.0, float(atlas.config.decay_rate), 0.01)
if len(atlas):
    try:
        outlook = forecast(
            atlas,
            hours=float(hours),
            steps=48,
            config=AtlasConfig.from_mapping({"decay_rate": rate}, atlas.config),
        )
    except AtlasError as exc:
        st.error(str(exc))
    else:
        st.plotly_chart(
            px.line(
                x=outlook.hours,
                y=outlook.remaining,
                labels={"x": "hours from now", "y": "memories left"},
                title=f"{label}: {len(outlook.evictions)} evictions forecast ({outlook.by_reason() or 'none'})",
            ),
            width="stretch",
        )
        st.dataframe(
            [
                {
                    "in hours": round(e.hours, 1),
                    "reason": e.reason,
                    "weight now": round(e.weight_now, 3),
                    "memory": e.content,
                }
                for e in outlook.evictions[:200]
            ],
            hide_index=True,
            width="stretch",
        )
else:
    st.caption(
        f"{label} is empty: play the demo or write in the playground to forecast its evictions."
    )
