"""A/B decay tuning: replay conversations under two parameter sets off the script thread,
pair the key facts, and turn the comparison into tables the page shows.

The page only starts a ``TuningJob`` and polls it; everything here is plain Python.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_core.config import AtlasConfig, preset
from memory_core.embedding.base import Embedder
from memory_core.errors import AtlasError
from memory_core.harness.compare import Comparison, compare_results
from memory_core.harness.replay import Progress, ReplaySettings, replay_all
from memory_core.harness.session_format import load_conversations

EDITABLE_FIELDS: tuple[str, ...] = (
    "decay_strategy",
    "decay_rate",
    "stability_hours",
    "reinforce_factor",
    "evict_threshold",
    "working_memory_size",
    "session_end_mode",
    "similarity_weight",
    "weight_weight",
    "recency_weight",
)
"""The fields the A/B forms expose; every other field comes from the chosen preset."""


def build_config(preset_name: str, overrides: Mapping[str, Any]) -> AtlasConfig:
    """Preset plus edited fields, validated (``ConfigError`` names the field)."""
    return AtlasConfig.from_mapping(dict(overrides), preset(preset_name))


class _Cancelled(Exception):
    pass


@dataclass(frozen=True, slots=True)
class TuningRequest:
    files: tuple[Path, ...]
    config_a: AtlasConfig
    config_b: AtlasConfig
    capacity_fraction: float | None = 0.25
    top_k: int = 10


class TuningJob:
    """Replays arm A then arm B in a daemon thread; ``progress`` goes 0 → 1; ``cancel`` stops it."""

    def __init__(self, request: TuningRequest, embedder: Embedder) -> None:
        self.request = request
        self.progress = 0.0
        self.stage = "starting"
        self.result: Comparison | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._embedder = embedder
        self._thread = threading.Thread(target=self._run, name="atlas-ab-tuning", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            conversations = load_conversations(self.request.files)
            settings = ReplaySettings(
                top_k=self.request.top_k, capacity_fraction=self.request.capacity_fraction
            )
            arms = []
            for index, (label, config) in enumerate(
                (("A", self.request.config_a), ("B", self.request.config_b))
            ):
                self.stage = f"replaying {label}"
                arms.append(
                    replay_all(
                        conversations,
                        config,
                        settings=settings,
                        embedder=self._embedder,
                        progress=lambda p, i=index: self._report(p, i),
                    )
                )
            self.stage = "comparing"
            self.result = compare_results(arms[0], arms[1], labels=("A", "B"), resamples=2_000)
            self.progress = 1.0
            self.stage = "done"
        except _Cancelled:
            self.stage = "cancelled"
        except AtlasError as exc:
            self.error = str(exc)
            self.stage = "failed"

    def _report(self, p: Progress, arm: int) -> None:
        if self._cancel.is_set():
            raise _Cancelled
        within = (p.conversation + p.turn / max(p.turns, 1)) / max(p.conversations, 1)
        self.progress = (arm + within) / 2


def diff_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per metric: A, B, B − A with its confidence interval and p-value."""
    return [
        {
            "metric": d.metric,
            "A": round(d.mean_a, 3),
            "B": round(d.mean_b, 3),
            "B − A": round(d.diff, 3),
            "CI low": round(d.ci_low, 3),
            "CI high": round(d.ci_high, 3),
            "p": round(d.p_value, 4),
            "test": d.test,
            "facts": d.n,
        }
        for d in comparison.diffs
    ]


def swing_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """The facts exactly one arm got right (what A kept and B lost, and the reverse)."""
    rows = []
    for winner, swings in (("A", comparison.a_only), ("B", comparison.b_only)):
        for s in swings:
            rows.append(
                {
                    "only right in": winner,
                    "conversation": s.conversation_id,
                    "fact": s.fact,
                    "expect": s.expect,
                    "rank A": s.rank_a,
                    "rank B": s.rank_b,
                }
            )
    return rows


def per_conversation_rows(
    comparison: Comparison, metric: str = "recall_at_k"
) -> list[dict[str, Any]]:
    """Metric per conversation and arm, for the bar chart."""
    rows = []
    for arm, results in (("A", comparison.results_a), ("B", comparison.results_b)):
        for result in results:
            rows.append(
                {
                    "arm": arm,
                    "conversation": result.conversation_id,
                    metric: getattr(result, metric),
                }
            )
    return rows


def selected_files(names: Sequence[str], available: Mapping[str, Path]) -> tuple[Path, ...]:
    return tuple(available[n] for n in names if n in available)
