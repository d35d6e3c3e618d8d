"""A/B decay tuning: replay conversations under two parameter sets off the script thread,
pair the key facts, explain every miss, and turn the result into the page's tables and charts.

The page only starts a ``TuningJob`` and polls it; everything here is plain Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import plotly.express as px
import plotly.graph_objects as go

from memory_core.dashboard.background import BackgroundJob
from memory_core.embedding.base import Embedder
from memory_core.engine import validate as check
from memory_core.engine.clock import to_datetime
from memory_core.engine.config import AtlasConfig, field_specs, preset
from memory_core.errors import AtlasError, InputError, NotFoundError
from memory_core.harness.compare import Comparison, PairedDiff, compare_results
from memory_core.harness.explain import Explanation, explain_missed
from memory_core.harness.metrics import ConversationResult
from memory_core.harness.replay import (
    Progress,
    ReplaySettings,
    embed_conversation,
    replay_conversation,
)
from memory_core.harness.session_format import Conversation, load_conversation
from memory_core.harness.sweep import SEARCH_SPACE

EDITABLE_FIELDS: tuple[str, ...] = tuple(SEARCH_SPACE)
"""The fields the A/B forms expose — exactly what a sweep searches, so any trial fits an arm;
every other field comes from the chosen preset."""

RESAMPLES = 2_000
"""Bootstrap resamples of the page's comparison (a reopened run recomputes the same CI)."""

ARMS = ("A", "B")
EMBED_SHARE = 0.1
"""Share of the progress bar for embedding the conversations before the replays."""

METRIC_HELP: dict[str, str] = {
    "recall_at_k": "Share of the key facts meant to be remembered whose memory comes back in "
    "the top-k answers to the fact's probe question at the end of the conversation.",
    "retention": "Share of the key facts meant to be remembered that some memory still holds "
    "at the end, whether or not the probe finds it.",
    "mrr": "Mean reciprocal rank of the fact's memory among the probe's answers: 1 when it "
    "comes first, 0.5 second, 0 when not in the top-k.",
    "forgetting_precision": "Share of the key facts meant to be forgotten (superseded or "
    "retracted) that no longer come back to their probe.",
}
COLUMN_HELP: dict[str, str] = {
    "B − A": "Difference of the means over the paired facts (B minus A).",
    "CI low": "Lower end of the bootstrap confidence interval of B − A.",
    "CI high": "Upper end of the bootstrap confidence interval of B − A.",
    "p": "Paired test: McNemar's exact test for yes/no metrics, Wilcoxon for MRR. Below "
    "0.05: a difference this large is unlikely to be chance.",
    "facts": "How many key facts were paired (the same fact under A and under B).",
}
_NOUNS = {
    "recall_at_k": ("recalls", "more key facts", "fewer key facts"),
    "retention": ("keeps", "more key facts in memory", "fewer key facts in memory"),
    "forgetting_precision": ("forgets", "more of what should be forgotten", "less of it"),
}


def specs_by_field() -> dict[str, dict[str, Any]]:
    """``field_specs()`` by field name: what the arm forms show and check per field."""
    return {spec["name"]: spec for spec in field_specs()}


def build_config(preset_name: str, overrides: Mapping[str, Any]) -> AtlasConfig:
    """Preset plus edited fields, validated (``ConfigError`` names the field)."""
    return AtlasConfig.from_mapping(dict(overrides), preset(preset_name))


@dataclass(frozen=True, slots=True)
class TuningRequest:
    files: tuple[Path, ...]
    config_a: AtlasConfig
    config_b: AtlasConfig
    capacity_fraction: float | None = 0.25
    top_k: int = 10
    presets: tuple[str, str] = ("", "")


@dataclass(frozen=True, slots=True)
class ABRun:
    """A finished (or reopened) A/B run: inputs, the paired comparison and every miss explained."""

    config_a: AtlasConfig
    config_b: AtlasConfig
    capacity_fraction: float | None
    top_k: int
    comparison: Comparison
    missed: tuple[dict[str, Any], ...]  # explanation rows, each with its "arm"
    presets: tuple[str, str] = ("", "")

    def results(self, arm: str) -> tuple[ConversationResult, ...]:
        return self.comparison.results_a if arm == "A" else self.comparison.results_b

    def conversation_ids(self) -> list[str]:
        return [r.conversation_id for r in self.comparison.results_a]


def build_run(
    request: TuningRequest,
    results_a: Sequence[ConversationResult],
    results_b: Sequence[ConversationResult],
    missed: Sequence[dict[str, Any]],
) -> ABRun:
    """Pair two arms' results into an ``ABRun`` (also how a saved run is redrawn)."""
    return ABRun(
        config_a=request.config_a,
        config_b=request.config_b,
        capacity_fraction=request.capacity_fraction,
        top_k=request.top_k,
        comparison=compare_results(results_a, results_b, labels=ARMS, resamples=RESAMPLES),
        missed=tuple(missed),
        presets=request.presets,
    )


class TuningJob(BackgroundJob[ABRun]):
    """Replays each conversation under arm A then arm B in a daemon thread.

    ``progress`` goes 0 → 1; ``cancel`` stops at the next turn. A conversation that fails
    (unreadable, a probe or turn over the arms' text limit, an error in its replay) is
    named in ``failures`` with what failed and left out of both arms; the others are
    compared. Only when every conversation failed does the job fail.
    """

    def __init__(self, request: TuningRequest, embedder: Embedder) -> None:
        self.request = request
        self._embedder = embedder
        self._start("atlas-ab-tuning")

    def _run(self) -> ABRun | None:
        request = self.request
        settings = ReplaySettings(top_k=request.top_k, capacity_fraction=request.capacity_fraction)
        total = len(request.files)
        arms: list[list[ConversationResult]] = [[], []]
        missed: list[dict[str, Any]] = []
        seen: dict[str, str] = {}  # conversation id -> file: results are paired by id
        for i, path in enumerate(request.files):
            try:
                conversation = load_conversation(path)
                if conversation.id in seen:
                    raise InputError("id", f"{conversation.id!r} is also {seen[conversation.id]}")
                seen[conversation.id] = path.name
                check_conversation(conversation, (request.config_a, request.config_b))
                results, rows = self._compare_one(conversation, settings, i, total)
            except AtlasError as exc:
                self.failures.append(f"conversation {path.stem}: {exc}")
                continue
            for arm, result in zip(arms, results, strict=True):
                arm.append(result)
            missed.extend(rows)
        self.checkpoint()
        if not arms[0]:
            self.error = "every conversation failed: " + "; ".join(self.failures)
            return None
        self.stage = "comparing"
        run = build_run(request, arms[0], arms[1], missed)
        self._progress = 1.0
        return run

    def _compare_one(
        self, conversation: Conversation, settings: ReplaySettings, index: int, total: int
    ) -> tuple[list[ConversationResult], list[dict[str, Any]]]:
        """Both arms over one conversation (its own share of the progress bar)."""
        self.stage = f"embedding {conversation.id} ({index + 1} of {total})"
        vectors = embed_conversation(conversation, self._embedder)
        self._progress = (index + EMBED_SHARE) / total
        results, missed = [], []
        for arm, (label, config) in enumerate(
            zip(ARMS, (self.request.config_a, self.request.config_b), strict=True)
        ):
            self.stage = f"replaying {conversation.id} under {label} ({index + 1} of {total})"
            replay = replay_conversation(
                conversation,
                config,
                settings=settings,
                embedder=self._embedder,
                vectors=vectors,
                progress=partial(self._report, index=index, total=total, arm=arm),
            )
            results.append(replay.result)
            missed += [explanation_row(label, conversation.id, e) for e in explain_missed(replay)]
        return results, missed

    def _report(self, p: Progress, index: int, total: int, arm: int) -> None:
        self.checkpoint()
        within = p.turn / max(p.turns, 1)
        share = EMBED_SHARE + (1.0 - EMBED_SHARE) * (arm + within) / 2
        self._progress = (index + share) / total


def check_conversation(conversation: Conversation, configs: Sequence[AtlasConfig]) -> None:
    """Refuse a conversation whose texts an arm cannot take, naming the fact or turn:
    a replay would otherwise fail halfway with only the engine's field name."""
    limit = min(c.max_content_chars for c in configs)
    for fact in conversation.key_facts:
        check.content(fact.probe, limit, f"key fact {fact.id} (“{_clip(fact.fact, 60)}”): probe")
    for session in conversation.sessions:
        for turn in session.turns:
            check.content(turn.text, limit, f"session {session.id}, turn {turn.id}: text")


def explanation_row(arm: str, conversation_id: str, e: Explanation) -> dict[str, Any]:
    """One missed fact as a JSON-ready table row, explained in words."""
    why = in_words(e)
    return {
        "arm": arm,
        "conversation": conversation_id,
        "fact": e.fact,
        "why": why if e.expect == "recalled" else f"should be gone, but {why}",
        "expect": e.expect,
        "verdict": e.verdict,
        "rank": e.rank,
        "fact_id": e.fact_id,
    }


def in_words(e: Explanation) -> str:
    """Why a fact came out as it did, quoting memories by their text, not their ids."""
    if e.verdict == "outranked":
        above = "; ".join(f"“{_clip(h.content)}”" for h in e.outranked_by[:3])
        return f"still remembered, but ranked {e.rank}: above it came {above}"
    if e.verdict == "recalled":
        return f"recalled at rank {e.rank}"
    if e.verdict == "not_a_candidate":
        return (
            "still remembered, but neither its words nor its meaning were close enough to the "
            "question for it to be considered"
        )
    if e.verdict == "never_stored":
        return "never stored: the write filter declined every turn that stated it"
    return "; ".join(_fate_words(f) for f in e.evidence) or "forgotten"


def _fate_words(fate: Any) -> str:
    if fate.stored_as is None:
        return f"turn {fate.turn_id} was never stored"
    steps = [
        "merged into a near-duplicate" if s.kind == "merged" else "folded into a session summary"
        for s in fate.steps
        if s.kind != "evicted"
    ]
    last = fate.steps[-1] if fate.steps else None
    if last is not None and last.kind == "evicted":
        reason = str(last.reason).replace("_", " ")
        steps.append(f"evicted ({reason}, weight {last.weight:.2f}) after turn {fate.after_turn}")
    return f"turn {fate.turn_id}: " + (", then ".join(steps) if steps else "gone")


def _clip(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def verdict(d: PairedDiff, confidence: float = 0.95) -> str:
    """One sentence saying what a paired difference means, and whether it is real."""
    alpha = 1.0 - confidence
    name = d.metric.replace("_at_k", "@k").replace("_", " ")
    if d.p_value >= alpha:
        return (
            f"**{name}**: no evidence of a difference (B − A = {d.diff:+.2f}, p={d.p_value:.2f}, "
            f"{d.n} facts)."
        )
    better = "B" if d.diff > 0 else "A"
    if d.metric in _NOUNS:
        verb, more, fewer = _NOUNS[d.metric]
        points = abs(d.diff) * 100
        what = f"{verb} {points:.0f} points {more if d.diff > 0 else fewer} than A"
        detail = f"{d.mean_b:.0%} against {d.mean_a:.0%}"
    else:
        what = f"ranks key facts {'higher' if d.diff > 0 else 'lower'} than A"
        detail = f"{d.mean_b:.2f} against {d.mean_a:.2f}"
    return (
        f"**{name}**: B {what} ({detail}), significant at p={d.p_value:.2g} — {better} is better."
    )


def differing_fields(a: AtlasConfig, b: AtlasConfig) -> list[dict[str, Any]]:
    """Every config field whose value differs between the arms (presets included)."""
    left, right = a.to_dict(), b.to_dict()
    return [
        {"field": name, "A": str(left[name]), "B": str(right[name])}
        for name in left
        if left[name] != right[name]
    ]


def missed_rows(run: ABRun, arm: str) -> list[dict[str, Any]]:
    """The facts ``arm`` did not get right, each with why (the ``arm`` column dropped)."""
    return [{k: v for k, v in r.items() if k != "arm"} for r in run.missed if r["arm"] == arm]


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


def fact_choices(run: ABRun, conversation_id: str) -> dict[str, str]:
    """Fact id → label of one conversation's key facts, for the trajectory picker."""
    result = _conversation(run, "A", conversation_id)
    return {f.fact_id: f"{f.fact_id}: {f.fact}" for f in result.facts}


def default_facts(run: ABRun, conversation_id: str, limit: int = 4) -> list[str]:
    """The facts worth plotting first: those one arm kept and the other lost, then the rest."""
    comparison = run.comparison
    swung = [
        s.fact_id
        for s in (*comparison.a_only, *comparison.b_only)
        if s.conversation_id == conversation_id
    ]
    others = [f for f in fact_choices(run, conversation_id) if f not in swung]
    return (swung + others)[:limit]


def trajectory_rows(
    run: ABRun, conversation_id: str, fact_ids: Sequence[str]
) -> list[dict[str, Any]]:
    """Each chosen fact's best weight over simulated time in both arms; ``None`` = not held."""
    rows = []
    for arm in ARMS:
        result = _conversation(run, arm, conversation_id)
        times = [to_datetime(t) for t in result.trajectory_times]
        for fact in result.facts:
            if fact.fact_id not in fact_ids:
                continue
            for at, weight in zip(times, fact.trajectory, strict=False):
                rows.append({"time": at, "weight": weight, "fact": fact.fact_id, "arm": arm})
    return rows


ARM_COLOURS = {"A": "#2563eb", "B": "#ea580c"}


def trajectory_figure(run: ABRun, conversation_id: str, fact_ids: Sequence[str]) -> go.Figure:
    """Key-fact weight over simulated time as small multiples: one panel per fact, A and B
    in two colours, so each fact's two lines can be compared at a glance."""
    names = fact_choices(run, conversation_id)
    rows = [
        {**r, "fact": _clip(names.get(r["fact"], r["fact"]), 60)}
        for r in trajectory_rows(run, conversation_id, fact_ids)
    ]
    figure = px.line(
        rows,
        x="time",
        y="weight",
        color="arm",
        color_discrete_map=ARM_COLOURS,
        facet_row="fact",
        line_shape="hv",  # sampled after each turn: a weight holds until the next sample
        title=f"{conversation_id}: key-fact weight over simulated time (gap = not held)",
        labels={"time": "simulated time", "weight": "weight"},
        height=150 + 170 * max(len(fact_ids), 1),
    )
    figure.update_traces(connectgaps=False)
    figure.for_each_annotation(
        lambda a: a.update(
            text=a.text.split("=", 1)[-1],
            textangle=0,
            x=0.0,
            xanchor="left",
            y=a.y + 0.02,
            yanchor="bottom",
            font_size=12,
        )
    )
    figure.update_layout(margin={"r": 20})
    return figure


def selected_files(names: Sequence[str], available: Mapping[str, Path]) -> tuple[Path, ...]:
    return tuple(available[n] for n in names if n in available)


def _conversation(run: ABRun, arm: str, conversation_id: str) -> ConversationResult:
    for result in run.results(arm):
        if result.conversation_id == conversation_id:
            return result
    raise NotFoundError("conversation", conversation_id)
