"""Optuna sweeps: maximise key-fact recall, minimise memory size, report the Pareto front.

Objectives per trial, over all conversations: pooled ``recall_at_k`` (maximise) and the
mean ``memory_fraction`` = final nodes / turns (minimise). A study lives in an Optuna
RDB storage given by URL, so several worker processes — or machines — join one study:
``sqlite:///sweeps.sqlite`` on one machine, ``postgresql+psycopg://user@host/db`` for a
team. Workers only replay: every text is embedded (and cached) by the process that
starts the sweep, before any worker starts.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import optuna
import sqlalchemy.exc

from memory_core.boundary import mask_secrets
from memory_core.embedding.registry import make_embedder
from memory_core.engine.config import AtlasConfig, field_names
from memory_core.errors import InputError
from memory_core.harness.metrics import summarize
from memory_core.harness.replay import ReplaySettings, embed_conversation, replay_all
from memory_core.harness.session_format import load_conversations

Suggest = Callable[[optuna.Trial], Any]

SEARCH_SPACE: dict[str, Suggest] = {
    "decay_strategy": lambda t: t.suggest_categorical(
        "decay_strategy", ["linear", "exponential", "ebbinghaus", "power"]
    ),
    "decay_rate": lambda t: t.suggest_float("decay_rate", 1e-4, 1.0, log=True),
    "stability_hours": lambda t: t.suggest_float("stability_hours", 1.0, 5_000.0, log=True),
    "reinforce_factor": lambda t: t.suggest_float("reinforce_factor", 1.0, 2.0),
    "frequency_gain": lambda t: t.suggest_float("frequency_gain", 0.0, 1.0),
    "recency_gain": lambda t: t.suggest_float("recency_gain", 0.0, 1.0),
    "association_gain": lambda t: t.suggest_float("association_gain", 0.0, 0.5),
    "base_weight_min": lambda t: t.suggest_float("base_weight_min", 0.0, 1.0),
    "base_weight_max": lambda t: t.suggest_float("base_weight_max", 1.0, 3.0),
    "evict_threshold": lambda t: t.suggest_float("evict_threshold", 0.0, 0.6),
    "orphan_threshold": lambda t: t.suggest_float("orphan_threshold", 0.0, 0.6),
    "working_memory_size": lambda t: t.suggest_int("working_memory_size", 0, 20),
    "similarity_weight": lambda t: t.suggest_float("similarity_weight", 0.05, 1.0),
    "weight_weight": lambda t: t.suggest_float("weight_weight", 0.0, 1.0),
    "recency_weight": lambda t: t.suggest_float("recency_weight", 0.0, 1.0),
    "lexical_share": lambda t: t.suggest_float("lexical_share", 0.0, 1.0),
    "lexical_saturation": lambda t: t.suggest_float("lexical_saturation", 0.5, 20.0, log=True),
    "session_end_mode": lambda t: t.suggest_categorical(
        "session_end_mode", ["keep", "fade", "summarize"]
    ),
}
"""Parameters a sweep explores by default: decay, reinforcement, forgetting and ranking."""

DIRECTIONS: tuple[optuna.study.StudyDirection, ...] = (
    optuna.study.StudyDirection.MAXIMIZE,
    optuna.study.StudyDirection.MINIMIZE,
)
OBJECTIVES = ("recall_at_k", "memory_fraction")


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """Everything a worker process needs to run trials (plain data, so it pickles)."""

    paths: tuple[str, ...]
    base: dict[str, Any]
    settings: dict[str, Any]
    embedder: str = "minilm"
    params: tuple[str, ...] = tuple(SEARCH_SPACE)
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [p for p in self.params if p not in SEARCH_SPACE]
        if unknown:
            raise InputError("params", f"unknown {unknown}; sweepable: {', '.join(SEARCH_SPACE)}")


@dataclass(frozen=True, slots=True)
class TrialRow:
    number: int
    recall_at_k: float
    memory_fraction: float
    params: dict[str, Any]
    metrics: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SweepResult:
    study_name: str
    storage: str | None
    trials: int
    pareto: tuple[TrialRow, ...]
    importances: dict[str, float]
    wall_seconds: float

    def best(self) -> TrialRow:
        """The Pareto trial with the highest recall (then the smaller memory)."""
        return max(self.pareto, key=lambda r: (r.recall_at_k, -r.memory_fraction, -r.number))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["best"] = asdict(self.best()) if self.pareto else None
        return out


def suggest_config(trial: optuna.Trial, base: AtlasConfig, params: Sequence[str]) -> AtlasConfig:
    """The base configuration with the trial's values for ``params``."""
    values = {name: SEARCH_SPACE[name](trial) for name in params}
    return AtlasConfig.from_mapping(values, base)


def make_objective(spec: SweepSpec) -> Callable[[optuna.Trial], tuple[float, float]]:
    """Load conversations once; each call replays them under the trial's parameters."""
    conversations = load_conversations(spec.paths)
    embedder = make_embedder(spec.embedder)
    base = AtlasConfig.from_mapping(spec.base)
    settings = ReplaySettings(**spec.settings)

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        config = suggest_config(trial, base, spec.params)
        summary = summarize(replay_all(conversations, config, settings=settings, embedder=embedder))
        for key in ("retention", "mrr", "forgetting_precision", "final_nodes", "wall_seconds"):
            trial.set_user_attr(key, getattr(summary, key))
        return summary.recall_at_k or 0.0, summary.memory_fraction

    return objective


@contextmanager
def opened_study(
    storage: str | None, study_name: str, *, seed: int = 0, create: bool = True
) -> Iterator[optuna.Study]:
    """Create or join a two-objective study (``storage=None``: in memory); the storage's
    connections are closed on exit."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rdb = None if storage is None else rdb_storage(storage)
    sampler = optuna.samplers.TPESampler(seed=seed)
    try:
        if create or rdb is None:
            yield optuna.create_study(
                storage=rdb,
                study_name=study_name,
                directions=list(DIRECTIONS),
                sampler=sampler,
                load_if_exists=True,
            )
        else:
            yield optuna.load_study(study_name=study_name, storage=rdb, sampler=sampler)
    finally:
        if rdb is not None:
            rdb.engine.dispose()


def rdb_storage(url: str, *, attempts: int = 5) -> optuna.storages.RDBStorage:
    """An RDB storage; SQLite files get a generous lock timeout for concurrent workers.

    Workers that start together race to create Optuna's tables in an empty database: the
    loser sees a unique-constraint error or "table ... already exists" (SQLAlchemy checks
    for a table, then creates it, and another process may create it in between) and simply
    retries once the tables exist.
    """
    kwargs: dict[str, Any] = {}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"timeout": 60}
    for attempt in range(1, attempts + 1):
        try:
            return optuna.storages.RDBStorage(url, engine_kwargs=kwargs)
        except Exception as exc:  # SQLAlchemy's URL/driver errors, translated at the boundary
            if lost_schema_race(exc) and attempt < attempts:
                time.sleep(0.2 * attempt)
                continue
            raise InputError(
                "storage", mask_secrets(f"cannot open {url!r}: {problem_of(exc)}")
            ) from exc
    raise AssertionError("unreachable")


def lost_schema_race(exc: Exception) -> bool:
    """Whether ``exc`` is another worker creating the same tables first (worth a retry)."""
    if isinstance(exc, sqlalchemy.exc.IntegrityError):
        return True
    return isinstance(exc, sqlalchemy.exc.DBAPIError) and "already exists" in str(exc.orig)


def problem_of(exc: Exception) -> str:
    """The driver's words on one line, not SQLAlchemy's links."""
    return " ".join(str(getattr(exc, "orig", None) or exc).split())


def run_worker(
    spec: SweepSpec, storage: str | None, study_name: str, trials: int, rank: int
) -> None:
    """One worker: join the study and run ``trials`` trials (a process target)."""
    with opened_study(storage, study_name, seed=spec.seed + rank, create=False) as study:
        study.optimize(make_objective(spec), n_trials=trials)


def sweep(
    spec: SweepSpec,
    *,
    trials: int,
    storage: str | None = None,
    study_name: str = "atlas-sweep",
    workers: int = 1,
    on_trial: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_study: Callable[[optuna.Study], None] | None = None,
) -> SweepResult:
    """Run ``trials`` trials split over ``workers`` processes; summarise the whole study.

    With ``workers > 1`` a storage URL is required (workers share the study through it).
    ``on_trial`` receives the study's finished-trial count as it grows. ``should_stop`` is
    asked after every trial (single process only): once it says yes, no further trial
    starts and the trials finished so far are summarised. ``on_study`` gets the live study
    after every trial (single process only), so a UI can redraw the front as it forms.
    """
    if trials < 1:
        raise InputError("trials", f"must be >= 1, got {trials!r}")
    if workers < 1:
        raise InputError("workers", f"must be >= 1, got {workers!r}")
    if workers > 1 and storage is None:
        raise InputError("storage", "several workers need a shared storage URL (sqlite:///...)")
    if workers > 1 and should_stop is not None:
        raise InputError("should_stop", "only a single-process sweep (workers=1) can be stopped")
    if workers > 1 and on_study is not None:
        raise InputError("on_study", "only a single-process sweep (workers=1) reports its study")
    conversations = load_conversations(spec.paths)
    embedder = make_embedder(spec.embedder)
    for conversation in conversations:  # fill the cache once, before any worker starts
        embed_conversation(conversation, embedder)
    started = time.perf_counter()
    with opened_study(storage, study_name, seed=spec.seed) as study:
        if workers == 1:
            study.optimize(
                make_objective(spec),
                n_trials=trials,
                callbacks=[_after_trial(on_trial, should_stop, on_study)],
            )
        else:
            _run_processes(spec, storage, study_name, trials, workers, study, on_trial)
        return summarize_study(study, storage, time.perf_counter() - started)


def _after_trial(
    on_trial: Callable[[int], None] | None,
    should_stop: Callable[[], bool] | None,
    on_study: Callable[[optuna.Study], None] | None,
) -> Callable[[optuna.Study, optuna.trial.FrozenTrial], None]:
    def callback(study: optuna.Study, _trial: optuna.trial.FrozenTrial) -> None:
        if on_trial is not None:
            on_trial(len(study.trials))
        if on_study is not None:
            on_study(study)
        if should_stop is not None and should_stop():
            study.stop()

    return callback


def _run_processes(
    spec: SweepSpec,
    storage: str | None,
    study_name: str,
    trials: int,
    workers: int,
    study: optuna.Study,
    on_trial: Callable[[int], None] | None,
) -> None:
    context = multiprocessing.get_context("spawn")
    shares = [trials // workers + (1 if i < trials % workers else 0) for i in range(workers)]
    processes = [
        context.Process(
            target=run_worker, args=(spec, storage, study_name, share, rank), daemon=True
        )
        for rank, share in enumerate(shares)
        if share
    ]
    for process in processes:
        process.start()
    while any(p.is_alive() for p in processes):
        time.sleep(0.5)
        if on_trial is not None:
            on_trial(len(study.get_trials(deepcopy=False)))
    failed = [p.exitcode for p in processes if p.exitcode != 0]
    if failed:
        raise InputError("workers", f"{len(failed)} worker process(es) failed (exit {failed})")


def summarize_study(study: optuna.Study, storage: str | None, wall: float) -> SweepResult:
    """Pareto front and recall importances of every finished trial in the study."""
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return SweepResult(
        study_name=study.study_name,
        storage=storage,
        trials=len(done),
        pareto=pareto_front(study),
        importances=importances(study),
        wall_seconds=wall,
    )


def pareto_front(study: optuna.Study) -> tuple[TrialRow, ...]:
    """The study's non-dominated finished trials, highest recall first."""
    front = sorted(study.best_trials, key=lambda t: (-t.values[0], t.values[1], t.number))
    return tuple(_trial_row(t) for t in front)


def trial_rows(study: optuna.Study) -> tuple[TrialRow, ...]:
    """Every finished trial of the study, in trial order (the Pareto front is a subset)."""
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return tuple(_trial_row(t) for t in sorted(done, key=lambda t: t.number))


def _trial_row(trial: optuna.trial.FrozenTrial) -> TrialRow:
    return TrialRow(
        number=trial.number,
        recall_at_k=float(trial.values[0]),
        memory_fraction=float(trial.values[1]),
        params=dict(trial.params),
        metrics=dict(trial.user_attrs),
    )


def importances(study: optuna.Study) -> dict[str, float]:
    """fANOVA importance of each parameter for recall; empty until there is variance."""
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(done) < 2 or len({t.values[0] for t in done}) < 2:
        return {}
    try:
        found = optuna.importance.get_param_importances(
            study,
            target=lambda t: t.values[0],
            evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0),
        )
    except (RuntimeError, ValueError):  # e.g. a single distinct value per parameter
        return {}
    return {name: float(value) for name, value in found.items()}


def best_config(result: SweepResult, base: AtlasConfig) -> AtlasConfig:
    """The base configuration with the best Pareto trial's parameters."""
    if not result.pareto:
        raise InputError("study", "has no finished trial")
    params = {k: v for k, v in result.best().params.items() if k in field_names()}
    return AtlasConfig.from_mapping(params, base)


def spec_for(
    paths: Sequence[str | Path],
    base: AtlasConfig,
    settings: ReplaySettings,
    *,
    embedder: str = "minilm",
    params: Sequence[str] | None = None,
    seed: int = 0,
) -> SweepSpec:
    """Package the inputs of a sweep for worker processes."""
    return SweepSpec(
        paths=tuple(str(p) for p in paths),
        base=base.to_dict(),
        settings={
            "policy": settings.policy,
            "top_k": settings.top_k,
            "context_k": settings.context_k,
            "link_top": settings.link_top,
            "trajectory_every": settings.trajectory_every,
            "capacity_fraction": settings.capacity_fraction,
        },
        embedder=embedder,
        params=tuple(params) if params is not None else tuple(SEARCH_SPACE),
        seed=seed,
    )
