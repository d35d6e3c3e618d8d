"""``BENCHMARKS.md`` and its plots from the results of one run."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import shapes_report
from benchmarks.measure import fmt_ms
from benchmarks.operations import OPS
from benchmarks.shapes_report import Check

ANALYSIS = Path(__file__).resolve().parent / "ANALYSIS.md"


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    size: int
    limit: float
    unit: str
    measure: Callable[[dict[str, Any]], float | None]
    at_least: bool = False
    cpu: Callable[[dict[str, Any]], float | None] | None = None


def _op(size_result: dict[str, Any], op: str, impl: str) -> dict[str, Any] | None:
    for row in size_result["ops"]:
        if row["op"] == op and row["impl"] == impl:
            found: dict[str, Any] = row
            return found
    return None


def _p99(op: str, key: str = "p99_ms") -> Callable[[dict[str, Any]], float | None]:
    def get(result: dict[str, Any]) -> float | None:
        row = _op(result, op, "engine")
        return None if row is None else float(row[key])

    return get


def _speedup(op: str) -> Callable[[dict[str, Any]], float | None]:
    def get(result: dict[str, Any]) -> float | None:
        ours, ref = _op(result, op, "engine"), _op(result, op, "reference")
        if ours is None or ref is None or ours["p50_ms"] <= 0:
            return None
        return float(ref["p50_ms"]) / float(ours["p50_ms"])

    return get


def _kb_per_memory(result: dict[str, Any]) -> float:
    return float(result["memory"]["engine"]["rss_per_memory"]) / 1024.0


def _recall(kind: str) -> Callable[[dict[str, Any]], float | None]:
    def get(result: dict[str, Any]) -> float | None:
        recall = result.get("recall")
        return None if recall is None else float(recall[f"recall_{kind}"])

    return get


TARGETS = (
    Target("retrieve top-10 p99", 100_000, 2.0, "ms", _p99(OPS[3]), cpu=_p99(OPS[3], "cpu_p99_ms")),
    Target("add + auto-link p99", 100_000, 1.0, "ms", _p99(OPS[0]), cpu=_p99(OPS[0], "cpu_p99_ms")),
    Target(
        "decay + eviction pass p99",
        100_000,
        10.0,
        "ms",
        _p99(OPS[6]),
        cpu=_p99(OPS[6], "cpu_p99_ms"),
    ),
    Target("memory per memory (RSS, all-in)", 100_000, 3.0, "KB", _kb_per_memory),
    Target("retrieve top-10 p99", 20_000, 1.5, "ms", _p99(OPS[3]), cpu=_p99(OPS[3], "cpu_p99_ms")),
    Target("retrieve speed-up vs seed (p50)", 20_000, 20.0, "x", _speedup(OPS[3]), True),
    Target("add speed-up vs seed (p50)", 20_000, 10.0, "x", _speedup(OPS[0]), True),
    Target("retrieve speed-up vs seed (p50)", 100_000, 50.0, "x", _speedup(OPS[3]), True),
    Target("add speed-up vs seed (p50)", 100_000, 50.0, "x", _speedup(OPS[0]), True),
    Target("HNSW recall@10, near queries", 100_000, 0.95, "", _recall("near"), True),
    Target("HNSW recall@10, random queries", 100_000, 0.95, "", _recall("random"), True),
)


def _load_note(machine: dict[str, Any]) -> str:
    """Whether other work competed for the cores, judged by the 1-minute load averages."""
    loads = [machine["load_avg"][0], *machine.get("load_avg_end", [0.0])[:1]]
    if max(loads) > machine["cores"]:
        return "other jobs shared the cores: wall times include waiting for a core"
    return "no more runnable work than cores: wall time is the code's own cost"


def _machine(results: dict[str, Any]) -> list[str]:
    m = results["machine"]
    return [
        f"- CPU: {m['cpu']}, {m['cores']} cores; RAM {m['ram_gb']} GB; {m['platform']}",
        f"- Python {m['python']}, numpy {m['numpy']}, faiss {m['faiss']}, networkx {m['networkx']}",
        f"- Load average at start {m['load_avg']}, at end {m.get('load_avg_end', '?')}"
        f" ({_load_note(m)}; the CPU columns are this thread's own CPU time)",
        f"- Whole run: {results.get('seconds', 0) / 60:.1f} min",
    ]


def _ops_table(size_result: dict[str, Any]) -> list[str]:
    lines = [
        "| operation | engine p50 ms | engine p99 ms | engine CPU p50 / p99 ms | n "
        "| seed p50 ms | seed p99 ms | n | speed-up (p50) | notes (engine; seed) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for op in OPS:
        ours, ref = _op(size_result, op, "engine"), _op(size_result, op, "reference")
        if ours is None or ref is None:
            continue
        ratio = ref["p50_ms"] / ours["p50_ms"] if ours["p50_ms"] > 0 else float("nan")
        lines.append(
            f"| {op} | {fmt_ms(ours['p50_ms'])} | {fmt_ms(ours['p99_ms'])} "
            f"| {fmt_ms(ours['cpu_p50_ms'])} / {fmt_ms(ours['cpu_p99_ms'])} | {ours['n']} "
            f"| {fmt_ms(ref['p50_ms'])} | {fmt_ms(ref['p99_ms'])} | {ref['n']} | {ratio:.1f}x "
            f"| {ours['note']}; {ref['note']} |"
        )
    return lines


def _traced(memory: dict[str, Any]) -> str:
    value = memory.get("traced_per_memory")
    return "skipped (a second build)" if value is None else f"{value:,.0f}"


def _memory_table(sizes: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| memories | engine RSS B/memory | engine tracemalloc B/memory | seed RSS B/memory "
        "| seed tracemalloc B/memory | engine / seed (RSS) | engine build (memories/s) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sizes:
        eng, ref = r["memory"]["engine"], r["memory"]["reference"]
        lines.append(
            f"| {r['size']:,} | {eng['rss_per_memory']:,.0f} "
            f"| {_traced(eng)} | {ref['rss_per_memory']:,.0f} "
            f"| {_traced(ref)} "
            f"| {eng['rss_per_memory'] / max(ref['rss_per_memory'], 1):.2f} "
            f"| {r['build']['engine']['per_s']:,.0f} |"
        )
    return lines


def _targets_table(results: dict[str, Any]) -> list[str]:
    by_size = {r["size"]: r for r in results["sizes"]}
    lines = [
        "| target | at | limit | measured (wall) | verdict | same, CPU time |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for t in TARGETS:
        result = by_size.get(t.size)
        value = None if result is None else t.measure(result)
        cpu = None if result is None or t.cpu is None else t.cpu(result)
        check = Check(t.name, f"{t.size:,}", t.limit, t.unit, value, t.at_least)
        lines.append(_target_row(check, "-" if cpu is None else f"{cpu:.3f} ms"))
    for check in shapes_report.checks(results):
        lines.append(_target_row(check))
    return lines


def _target_row(t: Check, cpu_shown: str = "-") -> str:
    """``| target | at | limit | measured | verdict | CPU |``; a CPU-only value is judged
    and shown in the CPU column."""
    if t.value is None:
        verdict, shown = "not measured in this run", "-"
    else:
        met = t.value >= t.limit if t.at_least else t.value <= t.limit
        gap = t.value / t.limit if not t.at_least else t.limit / max(t.value, 1e-9)
        verdict = (
            "met"
            if met
            else f"missed ({gap:.2f}x off)"
            if gap < 1.1
            else f"missed ({gap:.1f}x off)"
        )
        if t.unit == "x" and t.at_least:
            shown = f"{t.value:.0f}x"
        elif t.unit == "x":
            shown = f"{t.value:.2f}x"
        else:
            shown = f"{t.value:.3f} {t.unit}"
    if t.cpu_only:
        cpu_shown, shown = shown, "-"
    elif t.cpu is not None:
        cpu_shown = f"{t.cpu:.3f} {t.unit}"
    sign = ">=" if t.at_least else "<="
    return (
        f"| {t.name} | {t.at} | {sign} {t.limit:g} {t.unit} | {shown} | {verdict} | {cpu_shown} |"
    )


def _recall_lines(sizes: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in sizes:
        rec = r.get("recall")
        if not rec:
            continue
        lines.append(
            f"- The atlas-wide index at {rec['size']:,} random vectors, `{rec['index']}`"
            f" ({rec['params']}): recall@10 **{rec['recall_near']:.3f}** for"
            f" queries near a stored memory, **{rec['recall_random']:.3f}** for uniformly random"
            f" queries; raw index search p50 / p99"
            f" {fmt_ms(rec['search_near']['p50_ms'])} / {fmt_ms(rec['search_near']['p99_ms'])} ms."
        )
        by_ef = rec.get("by_ef") or []
        if len(by_ef) > 1:
            lines += [
                "",
                f"What recall costs at {rec['size']:,} (same index, only efSearch changed; CPU"
                " time of one 40-candidate search as retrieval asks):",
                "",
                "| efSearch | recall@10 near | recall@10 random | search CPU p50 / p99 ms |",
                "|---:|---:|---:|---:|",
            ]
            for row in by_ef:
                cpu = row["search_near"]
                lines.append(
                    f"| {row['ef_search']} | {row['recall_near']:.3f} | {row['recall_random']:.3f}"
                    f" | {fmt_ms(cpu['cpu_p50_ms'])} / {fmt_ms(cpu['cpu_p99_ms'])} |"
                )
    return lines or ["- No size above the HNSW threshold in this run: every index was exact."]


def _embedding_lines(emb: dict[str, Any]) -> list[str]:
    lines = [
        f"Model `{emb['model']}`: **{emb['batched_texts_per_s']:.0f} texts/s**"
        f" batched ({emb['batch']} texts per call); through the cache, repeated texts:"
        f" {emb['cached_batch_texts_per_s']:,.0f} texts/s.",
        "",
        "| single text | p50 ms | p99 ms | n |",
        "|---|---:|---:|---:|",
    ]
    for row in emb["latency"]:
        lines.append(
            f"| {row['op']} | {fmt_ms(row['p50_ms'])} | {fmt_ms(row['p99_ms'])} | {row['n']} |"
        )
    return lines


def _sweep_verdict(sw: dict[str, Any]) -> str:
    if sw["seconds"] <= sw["target_seconds"]:
        return "met"
    return f"missed ({sw['seconds'] / sw['target_seconds']:.1f}x off)"


def _sweep_target(sw: dict[str, Any] | None) -> list[str]:
    if sw is None:
        return []
    verdict = _sweep_verdict(sw)
    return [
        f"| Optuna sweep, {sw['trials']} trials, {sw['workers']} workers | all samples"
        f" | <= {sw['target_seconds']:.0f} s | {sw['seconds']:.0f} s | {verdict} | - |"
    ]


def _sweep_lines(sw: dict[str, Any]) -> list[str]:
    verdict = _sweep_verdict(sw)
    best = "-" if sw["best_recall"] is None else f"{sw['best_recall']:.3f}"
    return [
        f"`{sw['command']}` ({sw['conversations']} conversations, a fresh SQLite study):"
        f" **{sw['seconds']:.0f} s** wall for {sw['trials']} trials with {sw['workers']}"
        f" workers (target <= {sw['target_seconds']:.0f} s: {verdict}); {sw['cpu_seconds']:.0f} s"
        f" of CPU over all processes; best recall@k on the Pareto front {best}. Counts"
        " interpreter start, Optuna's import and embedding through the persistent cache.",
    ]


def _plots(results: dict[str, Any], out_dir: Path, report_dir: Path) -> list[str]:
    import plotly.graph_objects as go

    sizes = results["sizes"]
    latency = go.Figure()
    xs = [r["size"] for r in sizes]
    for op in OPS:
        for impl, dash in (("engine", "solid"), ("reference", "dash")):
            ys = [(_op(r, op, impl) or {}).get("p50_ms") for r in sizes]
            name = f"{op} ({'engine' if impl == 'engine' else 'seed'})"
            latency.add_trace(go.Scatter(x=xs, y=ys, name=name, line={"dash": dash}))
    latency.update_layout(
        title="p50 latency per operation (log-log)",
        xaxis={"type": "log", "title": "memories"},
        yaxis={"type": "log", "title": "ms"},
        width=1000,
        height=600,
    )
    memory = go.Figure()
    for impl in ("engine", "reference"):
        memory.add_trace(
            go.Bar(
                x=[f"{x:,}" for x in xs],
                y=[r["memory"][impl]["rss_per_memory"] for r in sizes],
                name="engine" if impl == "engine" else "seed",
            )
        )
    memory.update_layout(
        title="resident memory per memory (bytes)", barmode="group", width=800, height=450
    )
    links = []
    figures = {"latency": latency, "memory": memory, **shapes_report.figures(results)}
    for name, fig in figures.items():
        try:
            path = out_dir / f"{name}.png"
            fig.write_image(str(path))
        except Exception:  # kaleido needs a Chrome; fall back to a standalone page
            path = out_dir / f"{name}.html"
            fig.write_html(str(path), include_plotlyjs="cdn")
        rel = os.path.relpath(path, report_dir)
        links.append(f"![{name}]({rel})" if path.suffix == ".png" else f"[{name} plot]({rel})")
    return links


def write(results: dict[str, Any], path: Path, out_dir: Path) -> Path:
    sizes = results["sizes"]
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`python -m benchmarks.run`); raw numbers in"
        f" `{os.path.relpath(out_dir / 'results.json', path.parent)}`."
        + (" **Smoke run: too few samples to mean anything.**" if results["smoke"] else ""),
        "",
        "## Machine",
        "",
        *_machine(results),
        "",
        "## Targets",
        "",
        *_targets_table(results),
        *_sweep_target(results.get("sweep")),
        "",
        "## Method",
        "",
        "- Same data for both: template-generated memory texts with random 384-d unit vectors"
        " (no clusters), one main session plus small sessions for the purge test, created over"
        " 24 h of manual-clock time. Queries are held-out texts and vectors; the query's own"
        " embedding is excluded (`query_embedding=` / `embedding=` passed).",
        "- Engine: `ElasticMemoryAtlas` with the shipped defaults, `max_nodes = size + 1`,"
        " automatic decay off (`decay_interval_seconds=0`) so decay is timed alone; retrieve is"
        " the full hybrid path (FAISS + BM25 + graph expansion + weights, hits reinforced).",
        "- Seed reference (`benchmarks/seed_reference.py`): the first seed's section 3 algorithm"
        " (networkx graph, Python loops over all nodes, cosine per pair, linear cumulative"
        " decay, threshold eviction). It is loaded in bulk; its per-call cost is O(size), so it"
        " gets fewer samples at large sizes (n column).",
        "- 'add + auto-link': each new memory is deleted again untimed, so the size stays put."
        " 'add at capacity': each add evicts one memory (the seed only scans for weights < 0.15"
        " and so grows past its cap). 'decay + eviction pass': the clock moves 15 min between"
        " passes; the seed's cumulative decay evicts most memories in one pass, so they are put"
        " back untimed after each pass.",
        "- Memory: resident-set growth while building, measured in a fresh process per size"
        " (includes FAISS's C++ heap), and tracemalloc (Python heap incl. numpy, not FAISS).",
        "- Real shapes (issue #15), sections after the seed comparison: the same memories over"
        " 1 to 10,000 sessions; clustered real text (sample-session and LoCoMo dev texts with"
        " their MiniLM vectors, perturbed copies to the largest size) with approximate-index"
        " recall against exact search; snapshot export/load per size; the contradiction"
        " judge per pair; LoCoMo dev replays per turn.",
        "",
    ]
    for r in sizes:
        lines += [f"## {r['size']:,} memories ({r['dataset']} vectors)", "", *_ops_table(r), ""]
    lines += ["## Memory per memory", "", *_memory_table(sizes), ""]
    lines += ["## Approximate index quality", "", *_recall_lines(sizes), ""]
    if "embedding" in results:
        lines += ["## Embedding", "", *_embedding_lines(results["embedding"]), ""]
    if "replay" in results:
        rp = results["replay"]
        lines += [
            "## Harness replay",
            "",
            f"`{rp['conversation']}` ({rp['turns']} turns in {rp['sessions']} sessions, shipped"
            f" defaults, embeddings cached via `{rp['embedder']}`): **{rp['seconds_p50']:.2f} s**"
            f" per replay (p50 of {rp['repeats']}), {rp['turns_per_s']:,.0f} turns/s. Each turn"
            " is one retrieve plus one add, plus per-turn trajectory sampling of the key facts.",
            "",
        ]
    if "sweep" in results:
        lines += ["## Optuna sweep", "", *_sweep_lines(results["sweep"]), ""]
    if "real" in results:
        real = results["real"]
        lines += [
            f"## Real MiniLM vectors, {real['size']:,} memories",
            "",
            "Same scenario, vectors from the model (clustered, so auto-links and merges happen).",
            "",
            *_ops_table(real),
            "",
        ]
    lines += shapes_report.sections(results)
    lines += ["## Plots", "", *_plots(results, out_dir, path.parent), ""]
    if ANALYSIS.exists() and not results["smoke"]:
        lines += [ANALYSIS.read_text(encoding="utf-8").strip(), ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
