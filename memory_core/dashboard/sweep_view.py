"""The tuning page's Optuna sweep: a background job over ``harness.sweep`` and its charts.

The job runs ``sweep()`` in a daemon thread against an RDB storage (a SQLite file in the
data folder by default, or any URL — CLI workers can join the same study), counts finished
trials for the progress bar, keeps a ``partial`` outcome (finished trials and the front so
far, no importances) for the page to redraw while it runs, and stops after the current
trial when asked. Everything the
page draws comes from a plain ``SweepOutcome``, which is also what a saved sweep reopens to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import optuna
import plotly.express as px
import plotly.graph_objects as go

from memory_core.boundary import mask_secrets
from memory_core.dashboard.background import BackgroundJob
from memory_core.dashboard.limits import study_name
from memory_core.dashboard.locations import shown_url
from memory_core.dashboard.study_storage import check_storage
from memory_core.engine.config import AtlasConfig, field_names, preset
from memory_core.errors import AtlasError, InputError, NotFoundError
from memory_core.harness.replay import ReplaySettings
from memory_core.harness.sweep import (
    SEARCH_SPACE,
    TrialRow,
    opened_study,
    pareto_front,
    spec_for,
    sweep,
    trial_rows,
)

MIN_TRIALS_FOR_IMPORTANCE = 2


def default_study_name(now: datetime | None = None) -> str:
    return f"dashboard-{(now or datetime.now(UTC)):%Y%m%d-%H%M%S}"


def public_url(url: str) -> str:
    """The storage URL as it is shown and saved (``study_storage.shown_url``: password
    masked, a data-folder file by its name)."""
    return shown_url(url)


@dataclass(frozen=True, slots=True)
class SweepRequest:
    files: tuple[Path, ...]
    base_preset: str
    params: tuple[str, ...]
    trials: int
    capacity_fraction: float | None = 0.25
    top_k: int = 10
    storage: str = ""
    study_name: str = ""
    embedder: str = "minilm"
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.files:
            raise InputError("conversations", "choose at least one conversation")
        if not self.params:
            raise InputError("params", f"choose at least one of {', '.join(SEARCH_SPACE)}")
        if isinstance(self.trials, bool) or not 1 <= self.trials <= 1_000:
            raise InputError("trials", f"must be in [1, 1000], got {self.trials!r}")
        study_name(self.study_name, "study_name")
        check_storage(self.storage)  # offered or operator-allowed only: never /etc
        preset(self.base_preset)  # ConfigError lists the presets


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """Every finished trial of a sweep plus what the page needs to redraw it."""

    base_preset: str
    params: tuple[str, ...]
    conversations: tuple[str, ...]
    capacity_fraction: float | None
    top_k: int
    study_name: str
    storage: str
    trials: tuple[TrialRow, ...]
    pareto: tuple[int, ...]  # trial numbers on the front, best recall first
    importances: dict[str, float] = field(default_factory=dict)
    wall_seconds: float = 0.0

    def trial(self, number: int) -> TrialRow:
        for row in self.trials:
            if row.number == number:
                return row
        raise NotFoundError("trial", number)

    def best(self) -> TrialRow:
        """The front's highest-recall trial (then the smaller memory): the best so far."""
        if not self.pareto:
            raise NotFoundError("trial", "on the Pareto front")
        return self.trial(self.pareto[0])

    def config(self, number: int) -> AtlasConfig:
        """The base preset with trial ``number``'s parameters (validated)."""
        known = field_names()
        params = {k: v for k, v in self.trial(number).params.items() if k in known}
        return AtlasConfig.from_mapping(params, preset(self.base_preset))


class SweepJob(BackgroundJob[SweepOutcome]):
    """Runs a sweep in a daemon thread; ``progress`` goes 0 → 1; ``cancel`` stops after a trial."""

    def __init__(self, request: SweepRequest) -> None:
        self.request = request
        self.done = 0
        # replaced whole after each trial, never mutated: the page's thread reads a snapshot
        self.partial: SweepOutcome | None = None
        self._start("atlas-sweep")

    @property
    def progress(self) -> float:
        return min(self.done / self.request.trials, 1.0)

    def _run(self) -> None:
        request = self.request
        try:
            self.stage = "embedding the conversations"
            spec = spec_for(
                request.files,
                preset(request.base_preset),
                ReplaySettings(top_k=request.top_k, capacity_fraction=request.capacity_fraction),
                embedder=request.embedder,
                params=request.params,
                seed=request.seed,
            )
            self.stage = f"trial 1 of {request.trials}"
            summary = sweep(
                spec,
                trials=request.trials,
                storage=request.storage,
                study_name=request.study_name,
                on_trial=self._finished_one,
                should_stop=self.cancelled,
                on_study=self._saw_study,
            )
            with opened_study(request.storage, request.study_name, create=False) as study:
                rows = trial_rows(study)
            self.result = self._outcome(
                rows, summary.pareto, summary.importances, summary.wall_seconds
            )
            self.stage = "stopped" if self.cancelled() else "done"
        except AtlasError as exc:
            self.error = mask_secrets(str(exc))
            self.stage = "failed"
        except Exception as exc:  # a driver error past the harness: shown, never a password
            self.error = mask_secrets(f"the study storage failed: {type(exc).__name__}: {exc}")
            self.stage = "failed"

    def _outcome(
        self,
        rows: tuple[TrialRow, ...],
        front: tuple[TrialRow, ...],
        importances: dict[str, float],
        wall_seconds: float,
    ) -> SweepOutcome:
        request = self.request
        return SweepOutcome(
            base_preset=request.base_preset,
            params=request.params,
            conversations=tuple(p.stem for p in request.files),
            capacity_fraction=request.capacity_fraction,
            top_k=request.top_k,
            study_name=request.study_name,
            storage=public_url(request.storage),
            trials=rows,
            pareto=tuple(r.number for r in front),
            importances=importances,
            wall_seconds=wall_seconds,
        )

    def _saw_study(self, study: optuna.Study) -> None:
        self.partial = self._outcome(trial_rows(study), pareto_front(study), {}, 0.0)

    def _finished_one(self, _count: int) -> None:
        self.done += 1
        self.stage = f"trial {min(self.done + 1, self.request.trials)} of {self.request.trials}"


def trial_table(outcome: SweepOutcome) -> list[dict[str, Any]]:
    """One row per finished trial: objectives, Pareto membership, side metrics and params."""
    front = set(outcome.pareto)
    rows = []
    for t in outcome.trials:
        rows.append(
            {
                "trial": t.number,
                "Pareto": t.number in front,
                "recall_at_k": round(t.recall_at_k, 4),
                "memory_fraction": round(t.memory_fraction, 4),
                **{k: _rounded(t.metrics.get(k)) for k in ("retention", "mrr", "final_nodes")},
                **{k: _rounded(v) for k, v in sorted(t.params.items())},
            }
        )
    return rows


def pareto_figure(outcome: SweepOutcome) -> go.Figure:
    """Recall against memory size for every trial; the Pareto front highlighted and joined."""
    rows = trial_table(outcome)
    for row in rows:
        row["front"] = "Pareto front" if row["Pareto"] else "dominated"
    hover = ["trial", *sorted(outcome.params)]
    figure = px.scatter(
        rows,
        x="memory_fraction",
        y="recall_at_k",
        color="front",
        symbol="front",
        color_discrete_map={"Pareto front": "#d62728", "dominated": "#9fb4c7"},
        hover_data=hover,
        title=f"{outcome.study_name}: {len(rows)} trials, {len(outcome.pareto)} on the front",
        labels={
            "memory_fraction": "memory size (final memories / turns, lower is better)",
            "recall_at_k": "key-fact recall@k (higher is better)",
        },
    )
    front = sorted((r for r in rows if r["Pareto"]), key=lambda r: r["memory_fraction"])
    if len(front) > 1:
        figure.add_trace(
            go.Scatter(
                x=[r["memory_fraction"] for r in front],
                y=[r["recall_at_k"] for r in front],
                mode="lines",
                line={"color": "#d62728", "dash": "dot"},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    figure.update_traces(marker={"size": 11}, selector={"mode": "markers"})
    figure.update_xaxes(rangemode="tozero")
    return figure


def importance_note(outcome: SweepOutcome) -> str | None:
    """Why there are no importances yet (``None`` when there are)."""
    if outcome.importances:
        return None
    if len(outcome.trials) < MIN_TRIALS_FOR_IMPORTANCE:
        return (
            f"Parameter importances need at least {MIN_TRIALS_FOR_IMPORTANCE} finished trials; "
            f"this sweep has {len(outcome.trials)}."
        )
    return (
        "Parameter importances need trials whose recall differs; every trial so far scored "
        "the same, so no parameter explains anything yet. Run more trials or widen the search."
    )


RELIABLE_TRIALS = 20
"""Fewer finished trials than this and fANOVA importances are mostly noise."""


def importance_caution(outcome: SweepOutcome) -> str | None:
    """A warning when importances were computed from too few trials to rank anything."""
    if len(outcome.trials) >= RELIABLE_TRIALS:
        return None
    return (
        f"Only {len(outcome.trials)} trials: too few to rank parameter importances (aim for "
        f"{RELIABLE_TRIALS} or more). Read the chart below as noise, not as a ranking."
    )


def importance_figure(outcome: SweepOutcome) -> go.Figure:
    """fANOVA importance of each searched parameter for recall (Optuna's evaluator)."""
    ranked = sorted(outcome.importances.items(), key=lambda kv: kv[1])
    return px.bar(
        x=[v for _, v in ranked],
        y=[k for k, _ in ranked],
        orientation="h",
        title="Parameter importance for recall@k (fANOVA)",
        labels={"x": "importance", "y": "parameter"},
    )


def arm_values(outcome: SweepOutcome, number: int, fields: Sequence[str]) -> dict[str, Any]:
    """The values an A/B form shows for trial ``number`` (its base preset fills the rest)."""
    config = outcome.config(number)
    return {name: getattr(config, name) for name in fields}


def _rounded(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value
