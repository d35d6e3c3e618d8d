"""Floods: do a few personal facts survive, and rank first, after a flood of machine traffic?

An agent's memory receives tool output, logs, acknowledgements and templated status lines
all the time (issue #25). Each scenario states eight personal facts (hand-written, first
and third person, over two sessions), then floods the second session with a few hundred
lines of one shape under a memory budget (``max_nodes`` 60 by default, every other field
at its default), and finally asks each fact's plain question across all sessions. It
counts the facts still **held** (a live memory carries the fact's provenance) and those
found at **rank 1**.

Flood lines come from several templates per shape with seeded random numbers, ids and
timestamps, so a template is never one repeated string. ``make bench-recall`` prints the
table beside the LoCoMo dev split and the sample conversations; ``python -m
benchmarks.flood_recall`` prints it alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_core.embedding.base import Embedder
    from memory_core.engine.config import AtlasConfig

START = 1_767_225_600.0
"""2026-01-01 00:00 UTC: where every scenario's clock starts."""
FACT_GAP_SECONDS = 90.0
SESSION_GAP_SECONDS = 86_400.0
FLOOD_GAP_SECONDS = 30.0
FLOOD_LINES = 200
CAPACITIES: tuple[int, ...] = (60,)
TOP_K = 5


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact stated once, and the plain question that should bring it back first."""

    id: str
    statement: str
    question: str


FACTS: tuple[Fact, ...] = (
    Fact(
        "drink",
        "The user's favourite drink is a double espresso.",
        "What coffee does the user like to drink?",
    ),
    Fact(
        "penicillin",
        "The user is allergic to penicillin.",
        "Which medicine is the user allergic to?",
    ),
    Fact(
        "manager",
        "Dana, the user's manager, signs off every trip that costs more than 2,000 euros.",
        "Who has to approve expensive business travel?",
    ),
    Fact(
        "weekend-job",
        "On weekends the user works night shifts at the children's hospital.",
        "Where does the user work on Saturdays and Sundays?",
    ),
    Fact(
        "peanuts",
        "I am allergic to peanuts, so keep satay and peanut sauce away from my orders.",
        "What food allergy do I have?",
    ),
    Fact(
        "sister", "My sister Hanna moved to Tromsø last spring.", "Where does my sister live now?"
    ),
    Fact("puppy", "We named the new puppy Biscuit; he's a beagle.", "What is my dog called?"),
    Fact(
        "marathon",
        "I'm training for the Berlin marathon in late September.",
        "Which race am I preparing for?",
    ),
)
SESSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("day-1", ("drink", "penicillin", "manager", "weekend-job")),
    ("day-2", ("peanuts", "sister", "puppy", "marathon")),
)
"""Where each fact is stated; the flood follows in the last session."""


Line = Callable[[random.Random, int], str]
"""(seeded rng, line number) -> one flood line."""


def _hex(rng: random.Random, n: int = 8) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _stamp(rng: random.Random, i: int) -> str:
    minute = (i * 7 + rng.randrange(7)) % 60
    return f"2026-01-02T{8 + i // 60 % 12:02d}:{minute:02d}:{rng.randrange(60):02d}Z"


ACKS = (
    "ok",
    "lol",
    "thanks",
    "👍",
    "ok thanks",
    "haha",
    "sure",
    "k",
    "np",
    "🙂",
    "got it",
    "cool cool",
    "yep",
    "thx!",
    "sounds good",
    "😂😂",
)


def _pick(*templates: Line) -> Line:
    return lambda rng, i: rng.choice(templates)(rng, i)


SHAPES: dict[str, Line] = {
    "status lines": _pick(
        lambda r, i: (
            f"Status update {17 + i}: the nightly build number {17 + i} finished with "
            f"{r.randrange(7)} warnings."
        ),
        lambda r, i: (
            f"Ticket #{4100 + i} moved to {r.choice(['review', 'done', 'blocked'])} by the bot."
        ),
        lambda r, i: f"Sync job {i} copied {r.randrange(20, 900)} files in {r.randrange(2, 60)} s.",
    ),
    "build logs": _pick(
        lambda r, i: (
            f"[ci] pipeline {r.randrange(9000, 9999)} job test-{r.randrange(1, 9)} passed "
            f"({r.randrange(300, 420)} tests, {r.randrange(0, 5)} skipped) in {r.randrange(40, 300)}s"
        ),
        lambda r, i: f"Build #{1200 + i} of web-frontend succeeded, artifact {_hex(r, 7)}.tar.gz",
        lambda r, i: (
            f"{_stamp(r, i)} WARN compile: unused variable 'tmp{r.randrange(9)}' in "
            f"src/module_{r.randrange(40)}.py line {r.randrange(10, 900)}"
        ),
    ),
    "heartbeats": _pick(
        lambda r, i: (
            f"heartbeat from node-{r.randrange(1, 13)}: ok, latency {r.randrange(3, 90)} ms"
        ),
        lambda r, i: (
            f"{_stamp(r, i)} INFO healthcheck api-gateway status=200 rt={r.randrange(5, 250)}ms"
        ),
        lambda r, i: (
            f"cpu={r.randrange(2, 99)}% mem={r.randrange(20, 95)}% disk={r.randrange(30, 90)}% "
            f"on db-{r.randrange(1, 4)}"
        ),
    ),
    "chit-chat acks": lambda r, i: r.choice(ACKS),
    "sensor readings": _pick(
        lambda r, i: (
            f"sensor {r.choice(['t1', 't2', 'h7'])} temp={r.uniform(17, 25):.1f}C "
            f"humidity={r.randrange(30, 70)}%"
        ),
        lambda r, i: f"Reading #{i}: kitchen thermostat at {r.uniform(18, 23):.1f} °C",
        lambda r, i: (
            f"{_stamp(r, i)} pm2.5={r.randrange(3, 80)} µg/m³ station {r.randrange(100, 999)}"
        ),
    ),
    "tool output (JSON)": _pick(
        lambda r, i: json.dumps(
            {
                "tool": "web_search",
                "status": "ok",
                "results": r.randrange(0, 20),
                "elapsed_ms": r.randrange(80, 2000),
                "request_id": _hex(r, 12),
            }
        ),
        lambda r, i: json.dumps(
            {
                "event": "file_written",
                "path": f"/tmp/out_{i}.csv",
                "bytes": r.randrange(10**3, 10**6),
            }
        ),
        lambda r, i: json.dumps(
            {"tool": "calendar.list", "count": r.randrange(0, 9), "cursor": _hex(r, 16)}
        ),
    ),
}


def _mixed(rng: random.Random, i: int) -> str:
    return SHAPES[rng.choice(("build logs", "heartbeats", "sensor readings"))](rng, i)


SHAPES["mixed CI, heartbeats, sensors"] = _mixed


def flood(shape: str, n: int = FLOOD_LINES, *, seed: int = 0) -> list[str]:
    """``n`` lines of one shape, the same for the same seed."""
    rng = random.Random(f"{shape}:{seed}")
    return [SHAPES[shape](rng, i) for i in range(n)]


@dataclass(frozen=True, slots=True)
class FactOutcome:
    fact_id: str
    held: bool
    rank: int | None
    """Rank (1-based) of the first hit carrying the fact, None when not in the top-k."""
    top: str
    """What came back first."""


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    shape: str
    capacity: int | None
    facts: tuple[FactOutcome, ...]
    flood_held: int
    """Memories left that carry no fact (flood lines or their summaries)."""
    lines: int = 0
    seconds: float = 0.0

    @property
    def held(self) -> int:
        return sum(f.held for f in self.facts)

    @property
    def rank1(self) -> int:
        return sum(f.rank == 1 for f in self.facts)


@dataclass(frozen=True, slots=True)
class Scenario:
    """Facts by session, then ``lines`` added to the last session, then the questions."""

    shape: str
    lines: Sequence[str]
    facts: Sequence[Fact] = FACTS
    sessions: Sequence[tuple[str, Sequence[str]]] = SESSIONS
    flood_gap_seconds: float = FLOOD_GAP_SECONDS
    extra: dict[str, str] = field(default_factory=dict)


def run_scenario(
    scenario: Scenario, config: AtlasConfig, embedder: Embedder, *, top_k: int = TOP_K
) -> ScenarioResult:
    """Replay one scenario through the public API on a manual clock and score it."""
    from memory_core import ElasticMemoryAtlas
    from memory_core.engine.clock import ManualClock

    started = time.perf_counter()
    clock = ManualClock(START)
    atlas = ElasticMemoryAtlas(config, embedder=embedder, clock=clock)
    by_id = {f.id: f for f in scenario.facts}
    for n, (session, fact_ids) in enumerate(scenario.sessions):
        if n:
            clock.advance(SESSION_GAP_SECONDS)
        for fact_id in fact_ids:
            atlas.add(by_id[fact_id].statement, session_id=session, provenance=(fact_id,))
            clock.advance(FACT_GAP_SECONDS)
    last = scenario.sessions[-1][0]
    vectors = embedder.embed(list(scenario.lines)) if scenario.lines else []
    for i, (line, vector) in enumerate(zip(scenario.lines, vectors, strict=True)):
        clock.advance(scenario.flood_gap_seconds)
        atlas.add(line, session_id=last, provenance=(f"flood-{i}",), embedding=vector)
    clock.advance(FLOOD_GAP_SECONDS)
    held_provenance = {p for node in atlas.nodes() for p in node.provenance}
    outcomes = []
    for fact in scenario.facts:
        hits = atlas.retrieve(fact.question, top_k=top_k, reinforce=False)
        rank = next((r for r, h in enumerate(hits, 1) if fact.id in h.node.provenance), None)
        outcomes.append(
            FactOutcome(
                fact.id, fact.id in held_provenance, rank, hits[0].node.content if hits else ""
            )
        )
    fact_ids = set(by_id)
    flood_held = sum(1 for node in atlas.nodes() if not fact_ids & set(node.provenance))
    return ScenarioResult(
        scenario.shape,
        config.max_nodes,
        tuple(outcomes),
        flood_held,
        len(scenario.lines),
        time.perf_counter() - started,
    )


def run(
    embedder: Embedder,
    *,
    config: AtlasConfig | None = None,
    shapes: Sequence[str] | None = None,
    capacities: Sequence[int] = CAPACITIES,
    lines: int = FLOOD_LINES,
) -> list[ScenarioResult]:
    """Every shape at every capacity (``config`` supplies the other fields)."""
    from memory_core.engine.config import AtlasConfig

    base = config or AtlasConfig()
    results = []
    for capacity in capacities:
        cfg = AtlasConfig.from_mapping({"max_nodes": capacity}, base)
        for shape in shapes or SHAPES:
            results.append(run_scenario(Scenario(shape, flood(shape, lines)), cfg, embedder))
    return results


def render(results: Sequence[ScenarioResult]) -> str:
    """Markdown table: facts held and found at rank 1 per flood shape and capacity."""
    n = len(FACTS)
    lines = max((r.lines for r in results), default=FLOOD_LINES)
    rows = [
        f"Floods: {n} personal facts (first and third person, two sessions), then "
        f"{lines} flood lines in the second session; plain question per fact, top "
        f"{TOP_K}, default config except `max_nodes`.\n",
        "| flood | max_nodes | facts held | rank 1 | flood memories left |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in results:
        rows.append(f"| {r.shape} | {r.capacity} | {r.held}/{n} | {r.rank1}/{n} | {r.flood_held} |")
    held = sum(r.held for r in results)
    rank1 = sum(r.rank1 for r in results)
    total = n * len(results)
    rows.append(f"| **all** | | **{held}/{total}** | **{rank1}/{total}** | |")
    return "\n".join(rows)


def misses(results: Sequence[ScenarioResult]) -> list[str]:
    """One line per fact not held or not at rank 1, naming what came first instead."""
    out = []
    for r in results:
        for f in r.facts:
            if not f.held or f.rank != 1:
                state = "evicted" if not f.held else f"rank {f.rank}"
                out.append(f"{r.shape} @{r.capacity}: {f.fact_id} {state}; first: {f.top[:70]!r}")
    return out


SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"


@dataclass(frozen=True, slots=True)
class SampleCell:
    """The sample conversations under the engine at one capacity (None: no limit)."""

    capacity_fraction: float | None
    recall: float
    mrr: float
    retention: float


def sample_cells(embedder: Embedder, folder: Path = SAMPLES) -> list[SampleCell]:
    """``atlas simulate sample_sessions --json`` without and with ``--capacity-fraction
    0.25``, pooled; empty when the folder is missing."""
    from memory_core.engine.config import AtlasConfig
    from memory_core.harness.metrics import summarize
    from memory_core.harness.replay import ReplaySettings, replay_all
    from memory_core.harness.session_format import load_conversations

    if not folder.is_dir():
        return []
    conversations = load_conversations([folder])
    cells = []
    for fraction in (None, 0.25):
        results = replay_all(
            conversations,
            AtlasConfig(),
            settings=ReplaySettings(capacity_fraction=fraction),
            embedder=embedder,
        )
        s = summarize(results)
        cells.append(SampleCell(fraction, s.recall_at_k or 0.0, s.mrr or 0.0, s.retention or 0.0))
    return cells


def keep_what_matters(
    locomo: Sequence[tuple[str, float, float]],
    samples: Sequence[SampleCell],
    floods: Sequence[ScenarioResult],
) -> str:
    """One table of the three: LoCoMo dev (budget, recall@10, retention), the samples
    (recall@10, MRR) and the floods (facts held, rank 1), so a tuning change that helps
    one and hurts another shows at once."""
    rows = [
        "| data | setting | recall@10 / held | retention / rank 1 | MRR |",
        "|---|---|---:|---:|---:|",
    ]
    for budget, recall, retention in locomo:
        rows.append(f"| LoCoMo dev | {budget} | {recall:.3f} | {retention:.2f} | |")
    for cell in samples:
        setting = (
            "no limit"
            if cell.capacity_fraction is None
            else f"{cell.capacity_fraction:.0%} of turns"
        )
        rows.append(
            f"| samples | {setting} | {cell.recall:.3f} | {cell.retention:.2f} | {cell.mrr:.3f} |"
        )
    n = len(FACTS)
    for r in floods:
        rows.append(
            f"| flood: {r.shape} | max_nodes {r.capacity} | {r.held}/{n} | {r.rank1}/{n} | |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=int, nargs="+", default=list(CAPACITIES))
    parser.add_argument("--lines", type=int, default=FLOOD_LINES)
    parser.add_argument("--misses", action="store_true", help="list each miss")
    args = parser.parse_args(argv)
    from memory_core.embedding import make_embedder

    started = time.perf_counter()
    results = run(make_embedder("minilm"), capacities=args.capacity, lines=args.lines)
    print(render(results))
    if args.misses:
        print("\n".join(misses(results)))
    print(f"({time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
