"""Weight distribution data and figures: histogram, weight vs age, evolution over a run."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from memory_core.engine.clock import to_datetime
from memory_core.engine.events import DecayApplied
from memory_core.engine.model import MemoryNode
from memory_core.errors import InputError

SplitBy = Literal["kind", "session", "status"]
SPLIT_OPTIONS: tuple[SplitBy, ...] = ("kind", "session", "status")
_SPLIT_COLUMN = {"kind": "kind", "session": "session_id", "status": "status"}
FRAME_COLUMNS = ("id", "content", "kind", "session_id", "status", "weight", "age_hours", "recalls")
QUANTILES = (0.1, 0.5, 0.9)


def weight_frame(nodes: Sequence[MemoryNode], now: float) -> pd.DataFrame:
    """One row per memory with what the weight charts need."""
    return pd.DataFrame(
        {
            "id": [n.id for n in nodes],
            "content": [n.content for n in nodes],
            "kind": [n.kind.value for n in nodes],
            "session_id": [n.session_id for n in nodes],
            "status": [n.status.value for n in nodes],
            "weight": [n.weight for n in nodes],
            "age_hours": [max(0.0, (now - n.created_at) / 3600.0) for n in nodes],
            "recalls": [n.access_count for n in nodes],
        },
        columns=list(FRAME_COLUMNS),
    )


def histogram_figure(
    frame: pd.DataFrame,
    *,
    split_by: SplitBy = "kind",
    log_y: bool = False,
    threshold: float | None = None,
    bins: int = 30,
) -> go.Figure:
    """Stacked histogram of weights; the eviction threshold as a dashed red line."""
    column = _split_column(split_by)
    fig = px.histogram(
        frame.assign(**{column: frame[column].map(escape_label)}),
        x="weight",
        color=column,
        nbins=bins,
        log_y=log_y,
        barmode="stack",
        labels={"weight": "weight", column: split_by},
    )
    if threshold is not None:
        fig.add_vline(
            x=threshold,
            line_dash="dash",
            line_color="#dc2626",
            annotation_text=f"evict below {threshold:g}",
            annotation_position="top right",
        )
    fig.update_layout(margin={"l": 10, "r": 10, "t": 30, "b": 10}, yaxis_title="memories")
    return fig


def scatter_figure(
    frame: pd.DataFrame, *, split_by: SplitBy = "kind", threshold: float | None = None
) -> go.Figure:
    """Weight against age; hover shows the (text-only) start of each memory."""
    column = _split_column(split_by)
    shown = frame.assign(
        text=frame["content"].map(_short), **{column: frame[column].map(escape_label)}
    )
    fig = px.scatter(
        shown,
        x="age_hours",
        y="weight",
        color=column,
        size=shown["recalls"].clip(lower=0) + 1,
        size_max=14,
        hover_data={"text": True, "recalls": True, "age_hours": ":.1f", "weight": ":.3f"},
        labels={"age_hours": "age (hours)", column: split_by},
    )
    if threshold is not None:
        fig.add_hline(y=threshold, line_dash="dash", line_color="#dc2626")
    fig.update_layout(margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def evolution_frame(events: Iterable[DecayApplied]) -> pd.DataFrame:
    """Per decay pass: time, count, mean/min/max and 10/50/90 % quantiles of the weights."""
    rows = []
    for e in events:
        row: dict[str, object] = {
            "at": to_datetime(e.at),
            "nodes": e.nodes,
            "mean": e.mean_weight,
            "min": e.min_weight,
            "max": e.max_weight,
        }
        values = pd.Series(list(e.weights.values()), dtype=float)
        for q in QUANTILES:
            row[f"p{int(q * 100)}"] = float(values.quantile(q)) if len(values) else None
        rows.append(row)
    columns = ["at", "nodes", "mean", "min", "max", *(f"p{int(q * 100)}" for q in QUANTILES)]
    return pd.DataFrame(rows, columns=columns)


GAP_FACTOR = 5.0
"""A pause longer than this many typical intervals between decay passes is a gap."""


def with_gaps(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` with an empty row inside every gap (a skipped year, a server that was
    off) and how many there are: plotly breaks its lines there instead of drawing a
    straight line across time nobody measured."""
    if len(frame) < 3:
        return frame, 0
    at = pd.to_datetime(frame["at"])
    steps = at.diff().iloc[1:]
    typical = steps.median()
    if typical <= pd.Timedelta(0):
        return frame, 0
    gaps = steps[steps > typical * GAP_FACTOR]
    if gaps.empty:
        return frame, 0
    breaks = pd.DataFrame({"at": at[gaps.index] - gaps / 2})
    return pd.concat([frame, breaks]).sort_values("at", kind="stable"), len(gaps)


def evolution_figure(frame: pd.DataFrame, *, threshold: float | None = None) -> go.Figure:
    """Band (10–90 %) and median/mean of the weights over the run's decay passes; lines
    break at gaps (``with_gaps``) and every pass is a marker, so a lone pass shows."""
    frame, _ = with_gaps(frame)
    fig = go.Figure()
    if len(frame):
        fig.add_trace(
            go.Scatter(
                x=frame["at"], y=frame["max"], name="max", line={"color": "#9ca3af", "width": 1}
            )
        )
    if frame["p50"].notna().any():  # recorded passes carry no per-node weights
        fig.add_trace(
            go.Scatter(
                x=frame["at"], y=frame["p90"], name="90 %", line={"width": 0}, showlegend=False
            )
        )
        fig.add_trace(
            go.Scatter(
                x=frame["at"],
                y=frame["p10"],
                name="10–90 %",
                fill="tonexty",
                line={"width": 0},
                fillcolor="rgba(59,130,246,0.2)",
            )
        )
        fig.add_trace(
            go.Scatter(x=frame["at"], y=frame["p50"], name="median", line={"color": "#2563eb"})
        )
    if len(frame):
        fig.add_trace(
            go.Scatter(
                x=frame["at"],
                y=frame["mean"],
                name="mean",
                mode="lines+markers",
                marker={"size": 4},
                line={"color": "#f59e0b", "dash": "dot"},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=frame["at"], y=frame["min"], name="min", line={"color": "#6b7280", "width": 1}
            )
        )
    if threshold is not None:
        fig.add_hline(y=threshold, line_dash="dash", line_color="#dc2626")
    fig.update_layout(
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis_title="atlas clock",
        yaxis_title="weight",
    )
    return fig


def below_line_note(
    nodes: Sequence[MemoryNode], threshold: float, working: Iterable[str] = ()
) -> str | None:
    """Why memories under the eviction line are still in the atlas (None when none are).

    The line is applied by decay passes only, and never to pinned memories or to a
    session's working memory, so a weight can sit below it until the next pass.
    """
    below = [n for n in nodes if n.weight < threshold]
    if not below:
        return None
    held = set(working)
    pinned = sum(1 for n in below if n.pinned)
    in_working = sum(1 for n in below if not n.pinned and n.id in held)
    waiting = len(below) - pinned - in_working
    reasons = [
        f"{waiting} wait for the next decay pass (evicted then unless recalled first)"
        if waiting
        else "",
        f"{pinned} pinned (never evicted)" if pinned else "",
        f"{in_working} in a session's working memory (kept while it is open)" if in_working else "",
    ]
    return (
        f"{len(below)} of {len(nodes)} memories are below the eviction line and still here: "
        + "; ".join(r for r in reasons if r)
        + "."
    )


def _split_column(split_by: str) -> str:
    if split_by not in _SPLIT_COLUMN:
        raise InputError("split_by", f"must be one of {', '.join(SPLIT_OPTIONS)}, got {split_by!r}")
    return _SPLIT_COLUMN[split_by]


def _short(text: str, limit: int = 80) -> str:
    """Shortened hover text, entity-escaped because plotly.js reads a subset of HTML tags
    (``<a href>``, ``<b>``) in labels and shows entities as the characters they name."""
    flat = " ".join(text.split())
    return escape_label(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def escape_label(text: str) -> str:
    """Text for a plotly label, legend or hover: tags shown, never interpreted."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
