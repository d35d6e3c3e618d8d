"""``python -m benchmarks.run --sizes 1000 20000 100000 [--smoke] [--no-sweep]``: measure, report.

Each size runs in a fresh interpreter (``benchmarks.worker``: side by side with the seed,
index recall, snapshot export and load) so resident memory is attributable; the
many-sessions scenario at the largest size, the contradiction judge, embedding, harness
replays (a sample conversation; the LoCoMo dev split when present), the real-MiniLM run
and the clustered real-text scenario at the largest size follow in this process, then
the 50-trial Optuna sweep (``--no-sweep`` skips it; the smoke run never runs it).
Results land in ``<out-dir>/results.json`` and the report in ``BENCHMARKS.md`` (the smoke
run writes both under ``benchmarks/results/smoke/`` and skips the model).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.measure import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
REAL_SIZE = 1_000


def _worker(size: int, out: Path, smoke: bool) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.worker", str(size), str(out)]
    if smoke:
        cmd.append("--smoke")
    subprocess.run(cmd, cwd=ROOT, check=True)
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _model_sections(smoke: bool, size: int, log: Any) -> dict[str, Any]:
    """Embedding costs, harness replays (a sample conversation; the dev split), the
    side-by-side run on real MiniLM vectors and the clustered real-text scenario."""
    from benchmarks.clustered_bench import clustered_costs
    from benchmarks.datasets import minilm_dataset
    from benchmarks.embedding_bench import embedding_costs
    from benchmarks.operations import Plan
    from benchmarks.real_recall import dev_replay_costs
    from benchmarks.replay_bench import SHORT_CONVERSATION, replay_costs
    from benchmarks.worker import N_QUERIES, measure_size
    from memory_core.embedding import make_embedder
    from memory_core.embedding.cache import CachedEmbedder
    from memory_core.embedding.hashing import HashingEmbedder

    if smoke:
        fake = HashingEmbedder()
        return {
            "embedding": embedding_costs(fake, batch=32, singles=5),
            "replay": replay_costs(CachedEmbedder(fake), repeats=1, path=SHORT_CONVERSATION),
            "clustered": clustered_costs(size, CachedEmbedder(fake), smoke=True, n_queries=20),
        }
    from memory_core.embedding.minilm import MiniLMEmbedder

    out: dict[str, Any] = {}
    log("embedding: MiniLM throughput and cache")
    out["embedding"] = embedding_costs(MiniLMEmbedder())
    cached = make_embedder("minilm")
    log("harness: replaying the 730-turn sample conversation")
    out["replay"] = replay_costs(cached)
    log(f"side by side on real MiniLM vectors at {REAL_SIZE}")
    plan = Plan.for_size(REAL_SIZE)
    data = minilm_dataset(REAL_SIZE + plan.extra, N_QUERIES, cached)
    out["real"] = measure_size(REAL_SIZE, smoke=False, data=data, trace=False)
    log("harness: replaying the LoCoMo dev split at max_nodes=150 and with no limit")
    dev = dev_replay_costs()
    if dev is not None:
        out["dev_replay"] = dev
    log(f"clustered real text: {size} copies of the sample and dev texts")
    out["clustered"] = clustered_costs(size, cached)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 20_000, 100_000])
    parser.add_argument("--smoke", action="store_true", help="few samples, no model, no sweep")
    parser.add_argument(
        "--no-sweep", action="store_true", help="skip the 50-trial, 2-worker Optuna sweep timing"
    )
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="where BENCHMARKS.md goes")
    parser.add_argument(
        "--report-only", action="store_true", help="re-render the report from results.json"
    )
    args = parser.parse_args(argv)
    out_dir = args.out_dir or (RESULTS / "smoke" if args.smoke else RESULTS)
    report_path = args.report or (
        out_dir / "BENCHMARKS.md" if args.smoke else ROOT / "BENCHMARKS.md"
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        saved = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
        report.write(saved, report_path, out_dir)
        return 0
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[bench {time.perf_counter() - started:6.0f}s] {message}", flush=True)

    results: dict[str, Any] = {"machine": machine(), "smoke": args.smoke, "sizes": []}
    for size in args.sizes:
        log(f"size {size}: engine and seed reference")
        results["sizes"].append(_worker(size, out_dir / f"size-{size}.json", args.smoke))
    from benchmarks.sessions_bench import SESSION_COUNTS, sessions_costs

    many = max(args.sizes)
    log(f"{many} memories over {', '.join(map(str, SESSION_COUNTS))} sessions")
    results["sessions"] = (
        sessions_costs(many, (1, 10), n_queries=10) if args.smoke else sessions_costs(many)
    )
    from benchmarks.judge_bench import judge_costs

    log("contradiction judge: cost per labelled pair")
    results["judge"] = judge_costs(smoke=args.smoke)
    from benchmarks.context_bench import context_costs

    log("task context graph: extraction + insert per turn on LoCoMo dev text")
    context_size = {"max_turns": 20, "live_turns": 10} if args.smoke else {}
    if (context := context_costs(**context_size)) is not None:
        results["context"] = context
    if not args.smoke:
        from benchmarks import live_record_bench as live
        from benchmarks.first_add_bench import first_add_costs

        log("first add in a fresh process: is the word-frequency table preloaded?")
        results["first_add"] = first_add_costs()

        log(f"live follow: a recorded {many}-memory agent and a follower in another process")
        results["live_follow"] = live.in_process(
            many, live.WRITES, live.PACE, live.DEFAULT_EVERY, live.CHECKPOINT, None
        )
    results.update(_model_sections(args.smoke, many, log))
    if not args.smoke and not args.no_sweep:
        from benchmarks.sweep_bench import TRIALS, WORKERS, sweep_costs

        log(f"harness: {TRIALS}-trial Optuna sweep with {WORKERS} workers")
        results["sweep"] = sweep_costs()
    results["machine"]["load_avg_end"] = machine()["load_avg"]
    results["seconds"] = time.perf_counter() - started
    (out_dir / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    report.write(results, report_path, out_dir)
    log(f"wrote {report_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
