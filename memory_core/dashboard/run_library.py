"""Save A/B runs and sweeps to the ``runs`` table and reopen them without re-running.

A saved run is one ``RunRecord``: ``policy`` says its kind (``ab-tuning`` or ``sweep``),
``params`` holds the inputs, ``metrics`` the headline numbers (and a sweep's trials),
``conversations`` an A/B run's per-fact results with weight trajectories, and
``fact_results`` its explained misses. Reopening validates the payload and rebuilds the
same objects the page draws from; a damaged payload raises ``SavedRunError`` naming the
run and the broken path, and the row stays where it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from functools import cache
from typing import Any, TypeVar

from memory_core.dashboard.limits import run_name
from memory_core.dashboard.sweep_view import SweepOutcome
from memory_core.dashboard.tuning import ARMS, ABRun, TuningRequest, build_run
from memory_core.engine.config import AtlasConfig
from memory_core.errors import AtlasError, InputError
from memory_core.harness.metrics import ConversationResult, summarize
from memory_core.harness.sweep import TrialRow
from memory_core.store.engine import Database, open_database, resolve_url
from memory_core.store.records import RunRecord
from memory_core.store.repositories import RunRepository

FORMAT = "atlas-tuning-run/1"
KIND_AB = "ab-tuning"
KIND_SWEEP = "sweep"
LISTED = 100

T = TypeVar("T")


class SavedRunError(InputError):
    """A saved run's payload cannot be read back (nothing is deleted or changed)."""


def runs_of(db: Database | None) -> RunRepository:
    """Where runs are saved: ``db`` (the live system's, when it records), else the configured
    database (``$ATLAS_DATABASE_URL`` or the data folder's), opened once per process."""
    return db.runs if db is not None else _opened(resolve_url().render_as_string(False)).runs


@cache
def _opened(url: str) -> Database:
    return open_database(url)


def save_ab(runs: RunRepository, name: str, run: ABRun) -> RunRecord:
    """Store an A/B run with everything needed to redraw its tables and charts."""
    comparison = run.comparison
    return runs.add(
        name=run_name(name),
        policy=KIND_AB,
        params={
            "format": FORMAT,
            "presets": list(run.presets),
            "config_a": run.config_a.to_dict(),
            "config_b": run.config_b.to_dict(),
            "capacity_fraction": run.capacity_fraction,
            "top_k": run.top_k,
        },
        metrics={
            "summary_a": summarize(comparison.results_a).to_dict(),
            "summary_b": summarize(comparison.results_b).to_dict(),
            "diffs": [asdict(d) for d in comparison.diffs],
        },
        conversations=[
            {"arm": arm, **result.to_dict(trajectories=True)}
            for arm in ARMS
            for result in run.results(arm)
        ],
        fact_results=list(run.missed),
    )


def save_sweep(runs: RunRepository, name: str, outcome: SweepOutcome) -> RunRecord:
    """Store a sweep: its inputs, the study it lives in, and every finished trial."""
    return runs.add(
        name=run_name(name),
        policy=KIND_SWEEP,
        params={
            "format": FORMAT,
            "base_preset": outcome.base_preset,
            "params": list(outcome.params),
            "capacity_fraction": outcome.capacity_fraction,
            "top_k": outcome.top_k,
            "study_name": outcome.study_name,
            "storage": outcome.storage,
        },
        metrics={
            "pareto": list(outcome.pareto),
            "importances": dict(outcome.importances),
            "wall_seconds": outcome.wall_seconds,
            "trials": [asdict(t) for t in outcome.trials],
        },
        conversations=list(outcome.conversations),
    )


def saved_runs(runs: RunRepository) -> dict[str, str]:
    """Run id → label of the newest saved tuning runs, for the page's selector."""
    page = runs.list(limit=LISTED)
    return {
        r.id: f"{r.name} · {r.policy} · {r.created_at:%Y-%m-%d %H:%M}"
        for r in page.items
        if r.policy in (KIND_AB, KIND_SWEEP)
    }


def reopen(record: RunRecord) -> ABRun | SweepOutcome:
    """Rebuild a saved run; ``SavedRunError`` names the run and what is wrong with it."""
    try:
        if record.params.get("format") != FORMAT:
            raise _Bad("params.format", f"expected {FORMAT!r}, got {record.params.get('format')!r}")
        if record.policy == KIND_AB:
            return _ab(record)
        if record.policy == KIND_SWEEP:
            return _sweep(record)
        raise _Bad("policy", f"{record.policy!r} is not a tuning run")
    except _Bad as exc:
        raise SavedRunError(f"saved run {record.name!r}", f"{exc.path}: {exc.problem}") from None
    except KeyError as exc:
        raise SavedRunError(
            f"saved run {record.name!r}", f"unreadable payload (missing {exc})"
        ) from None
    except (AtlasError, TypeError, ValueError, AttributeError) as exc:
        raise SavedRunError(f"saved run {record.name!r}", f"unreadable payload ({exc})") from None


class _Bad(Exception):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def _ab(record: RunRecord) -> ABRun:
    params = record.params
    by_arm: dict[str, list[ConversationResult]] = {arm: [] for arm in ARMS}
    for i, item in enumerate(record.conversations):
        path = f"conversations[{i}]"
        data = _get(item, dict, path)
        arm = data.get("arm")
        if arm not in by_arm:
            raise _Bad(f"{path}.arm", f"must be A or B, got {arm!r}")
        by_arm[arm].append(_conversation(data, path))
    presets = _get(params.get("presets", ["", ""]), list, "params.presets")
    request = TuningRequest(
        files=(),
        config_a=_config(params, "config_a"),
        config_b=_config(params, "config_b"),
        capacity_fraction=params.get("capacity_fraction"),
        top_k=_get(params.get("top_k"), int, "params.top_k"),
        presets=(str(presets[0]), str(presets[1])),
    )
    missed = [_get(r, dict, f"fact_results[{i}]") for i, r in enumerate(record.fact_results)]
    return build_run(request, by_arm["A"], by_arm["B"], missed)


def _config(params: Mapping[str, Any], key: str) -> AtlasConfig:
    return AtlasConfig.from_mapping(_get(params.get(key), dict, f"params.{key}"))


def _conversation(data: Mapping[str, Any], path: str) -> ConversationResult:
    """The containers are checked here, so a bad one is named by its path."""
    for j, f in enumerate(_get(data.get("facts"), list, f"{path}.facts")):
        _get(f, dict, f"{path}.facts[{j}]")
    _get(data.get("evictions"), dict, f"{path}.evictions")
    return ConversationResult.from_dict(data)


def _sweep(record: RunRecord) -> SweepOutcome:
    params, metrics = record.params, record.metrics
    trials = tuple(
        TrialRow(
            number=int(t["number"]),
            recall_at_k=float(t["recall_at_k"]),
            memory_fraction=float(t["memory_fraction"]),
            params=_get(t["params"], dict, f"metrics.trials[{i}].params"),
            metrics=_get(t["metrics"], dict, f"metrics.trials[{i}].metrics"),
        )
        for i, t in enumerate(_get(metrics.get("trials"), list, "metrics.trials"))
    )
    known = {t.number for t in trials}
    pareto = tuple(int(n) for n in _get(metrics.get("pareto"), list, "metrics.pareto"))
    if not set(pareto) <= known:
        raise _Bad(
            "metrics.pareto", f"names trials that are not saved: {sorted(set(pareto) - known)}"
        )
    return SweepOutcome(
        base_preset=str(params["base_preset"]),
        params=tuple(str(p) for p in _get(params.get("params"), list, "params.params")),
        conversations=tuple(str(c) for c in record.conversations),
        capacity_fraction=params.get("capacity_fraction"),
        top_k=int(params["top_k"]),
        study_name=str(params["study_name"]),
        storage=str(params["storage"]),
        trials=trials,
        pareto=pareto,
        importances={
            str(k): float(v)
            for k, v in _get(metrics.get("importances", {}), dict, "metrics.importances").items()
        },
        wall_seconds=float(metrics.get("wall_seconds", 0.0)),
    )


def _get(value: Any, kind: type[T], path: str) -> T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Bad(path, f"expected {kind.__name__}, got {type(value).__name__}")
    return value
