"""Report parts for the real-shape scenarios (issue #15): many sessions, clustered real
text, snapshots, the contradiction judge, LoCoMo dev replays and live follow.

Each part reads its own entry of ``results.json`` and is left out when the run did not
measure it. ``checks`` gives the targets-table rows, ``sections`` the report sections
and ``figures`` the plots; ``benchmarks.report`` lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.measure import fmt_ms

SESSIONS_P99_MS = 2.0
SESSIONS_GROWTH = 1.5
GROWTH_AT = 1_000
"""Issue #15: retrieve p99 <= 2 ms at every session count, <= 1.5x from 1 to 1,000."""
CLUSTERED_RETRIEVE_P99_MS = 2.0
CLUSTERED_ADD_P99_MS = 1.0
RETRIEVE, ADD = "retrieve top-10", "add + auto-link"
SESSION_MODES = ("cross-session", "single-session")


@dataclass(frozen=True, slots=True)
class Check:
    """One targets-table row. ``value`` is wall time unless ``cpu_only`` (then it is this
    thread's CPU time and shown in the CPU column); ``at_least`` for floors."""

    name: str
    at: str
    limit: float
    unit: str
    value: float | None
    at_least: bool = False
    cpu_only: bool = False
    cpu: float | None = None
    """This thread's CPU time for the same measure, shown beside a wall ``value``."""


def checks(results: dict[str, Any]) -> list[Check]:
    out: list[Check] = []
    if "sessions" in results:
        out += _session_checks(results["sessions"])
    if "clustered" in results:
        out += _clustered_checks(results["clustered"])
    out += _snapshot_checks(results["sizes"])
    if "judge" in results:
        j = results["judge"]
        out.append(
            Check(
                f"contradiction judge ({j['judge']}) p99 per pair, first look",
                f"{j['pairs']} pairs",
                j["budget_ms"],
                "ms",
                j["p99_ms"],
                cpu=j.get("cpu_p99_ms"),
            )
        )
        if j.get("guard"):
            out += _guard_checks(j["guard"])
    if "first_add" in results:
        first = results["first_add"]
        out.append(
            Check(
                "first add in a process, atlas ready",
                "fresh process",
                first["target_ms"],
                "ms",
                first["ready"]["first_add_ms"],
            )
        )
    if "live_follow" in results:
        out += _live_follow_checks(results["live_follow"])
    if "dev_replay" in results:
        dev = results["dev_replay"]
        for cell in dev["cells"]:
            if cell["max_nodes"] == 150:
                out.append(
                    Check(
                        "LoCoMo dev replay per turn, max_nodes=150",
                        f"{dev['turns']:,} turns",
                        dev["target_ms_per_turn"],
                        "ms",
                        cell["ms_per_turn"],
                    )
                )
    if "context" in results:
        from benchmarks.context_bench import checks as context_checks

        out += context_checks(results["context"])
    return out


def _guard_checks(guard: dict[str, Any]) -> list[Check]:
    """Issue #27: an add with conflict checks on (the running guard's, and the guard the
    dashboard makes after a restart, once its background warm-up is done) and a full scan
    of the atlas."""
    at = f"{guard['memories']:,} memories"
    return [
        Check(
            "add with conflict checks p99",
            at,
            guard["add_budget_ms"],
            "ms",
            guard["add_p99_ms"],
            cpu=guard["add_cpu_p99_ms"],
        ),
        Check(
            "add with conflict checks p99, after a restart (guard warmed in the background)",
            at,
            guard["add_budget_ms"],
            "ms",
            guard["restarted_add_p99_ms"],
            cpu=guard["restarted_add_cpu_p99_ms"],
        ),
        Check(
            "full contradiction scan",
            at,
            guard["scan_budget_s"],
            "s",
            guard["scan_s"],
            cpu=guard["scan_cpu_s"],
        ),
    ]


def _live_follow_checks(live: dict[str, Any]) -> list[Check]:
    from benchmarks.live_record_bench import LAG_TARGET_S, OVERHEAD_TARGET

    at, ratios = f"{live['size']:,}", live["overhead"]["ratios"]
    return (
        [  # judged by the top of the paired ratio's 95 % interval (benchmarks.paired_overhead)
            Check(
                f"recorded / unrecorded add {q}, upper 95 % bound",
                at,
                OVERHEAD_TARGET,
                "x",
                ratios[f"wall_{q}"]["high"],
                cpu=ratios[f"cpu_{q}"]["high"],
            )
            for q in ("p50", "p99")
        ]
        + [Check("live follow lag p99", at, LAG_TARGET_S, "s", live["lag_p99_s"])]
        + _hold_checks(live)
    )


def _hold_checks(live: dict[str, Any]) -> list[Check]:
    """The longest a checkpoint held the atlas lock at a time, and the agent's add p99
    while checkpoints ran back to back (wall; CPU beside each)."""
    from benchmarks.live_record_bench import ADD_DURING_TARGET_MS, HOLD_TARGET_MS

    holds = live.get("checkpoint_holds")
    if not holds:
        return []
    at, during = f"{live['size']:,}", holds["add_during"]
    return [
        Check(
            "checkpoint: longest atlas-lock hold",
            at,
            HOLD_TARGET_MS,
            "ms",
            holds["hold_max_ms"],
            cpu=holds.get("hold_cpu_max_ms"),
        ),
        Check(
            "add p99 while checkpoints run",
            at,
            ADD_DURING_TARGET_MS,
            "ms",
            during["p99_ms"],
            cpu=during["cpu_p99_ms"],
        ),
    ]


def _session_checks(sessions: dict[str, Any]) -> list[Check]:
    """The many-sessions scenario times this thread's CPU only."""
    rows = sessions["rows"]
    size = f"{rows[0]['size']:,} / {rows[0]['sessions']}-{rows[-1]['sessions']:,} sessions"
    out = []
    for mode in SESSION_MODES:
        worst = max(r[mode]["p99_ms"] for r in rows)
        out.append(
            Check(
                f"{mode} retrieve p99, worst count",
                size,
                SESSIONS_P99_MS,
                "ms",
                worst,
                cpu_only=True,
            )
        )
    growth = growth_to(sessions, GROWTH_AT)
    for mode in SESSION_MODES:
        out.append(
            Check(
                f"{mode} retrieve p99 growth, 1 -> {GROWTH_AT:,} sessions",
                f"{rows[0]['size']:,}",
                SESSIONS_GROWTH,
                "x",
                None if growth is None else growth[f"{mode} p99_ms"],
                cpu_only=True,
            )
        )
    return out


def growth_to(sessions: dict[str, Any], count: int) -> dict[str, float] | None:
    """p50 and p99 per mode at ``count`` sessions over those at the first count."""
    rows = sessions["rows"]
    at = next((r for r in rows if r["sessions"] == count), None)
    if at is None or rows[0] is at:
        return None
    return {
        f"{mode} {stat}": at[mode][stat] / rows[0][mode][stat]
        for mode in SESSION_MODES
        for stat in ("p50_ms", "p99_ms")
    }


def _op(ops: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((row for row in ops if row["op"] == name), None)


def _clustered_checks(cl: dict[str, Any]) -> list[Check]:
    at = f"{cl['size']:,} clustered"
    out = []
    for name, op, limit in (
        ("retrieve top-10 p99", RETRIEVE, CLUSTERED_RETRIEVE_P99_MS),
        ("add + auto-link p99", ADD, CLUSTERED_ADD_P99_MS),
    ):
        row = _op(cl["ops"], op) or {}
        out.append(Check(name, at, limit, "ms", row.get("p99_ms"), cpu=row.get("cpu_p99_ms")))
    default = next(r for r in cl["by_ef"] if r["ef_search"] == cl["default_ef"])
    for name, label in (("text", "held-out texts"), ("perturbed", "perturbed texts")):
        out.append(
            Check(
                f"{cl['index'].upper()} recall@10 at efSearch {cl['default_ef']}, {label}",
                at,
                cl["target_recall"],
                "",
                default[f"recall_{name}"],
                at_least=True,
            )
        )
    return out


def _snapshot_checks(sizes: list[dict[str, Any]]) -> list[Check]:
    measured = [r for r in sizes if "snapshot" in r]
    if not measured:
        return []
    snap = max(measured, key=lambda r: r["size"])["snapshot"]
    at = f"{snap['size']:,}"
    parts = ("read + check", "restore (with indexing)")
    return [
        Check(
            "snapshot export (median)",
            at,
            snap["target_ms"],
            "ms",
            snap["export"]["wall_ms"],
            cpu=snap["export"]["cpu_ms"],
        ),
        Check(
            "snapshot load",
            at,
            snap["target_ms"],
            "ms",
            snap["load_ms"],
            cpu=sum(snap[part]["cpu_ms"] for part in parts),
        ),
    ]


def sections(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if "sessions" in results:
        lines += ["## Many sessions", "", *sessions_lines(results["sessions"]), ""]
    if "clustered" in results:
        lines += [
            f"## Clustered real text, {results['clustered']['size']:,} memories",
            "",
            *clustered_lines(results["clustered"]),
            "",
        ]
    snapshots = [r["snapshot"] for r in results["sizes"] if "snapshot" in r]
    if snapshots:
        lines += ["## Snapshots", "", *snapshot_lines(snapshots), ""]
    if "judge" in results:
        lines += ["## Contradiction judge", "", *judge_lines(results["judge"]), ""]
    if "first_add" in results:
        from benchmarks.first_add_bench import lines as first_add_lines

        lines += ["## First add in a process", "", *first_add_lines(results["first_add"]), ""]
    if "live_follow" in results:
        from benchmarks.live_record_bench import report as live_follow_report

        lines += ["## Live follow", "", live_follow_report(results["live_follow"]), ""]
    if "dev_replay" in results:
        lines += ["## LoCoMo dev replay", "", *dev_replay_lines(results["dev_replay"]), ""]
    if "context" in results:
        from benchmarks.context_bench import lines as context_lines

        lines += ["## Task context graph", "", *context_lines(results["context"]), ""]
    return lines


def sessions_lines(sessions: dict[str, Any]) -> list[str]:
    """Retrieve cost by how the same memories are spread over sessions
    (``benchmarks/sessions_bench.py``), and its growth against the 1.5x target."""
    rows = sessions["rows"]
    lines = [
        f"The same {rows[0]['size']:,} memories (random vectors) in equal blocks over N sessions;"
        " top-10 retrieve from a round-robin session, thread CPU time (ms).",
        "",
        "| sessions | index | cross-session p50 | p99 | single-session p50 | p99 |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        cross, single = r["cross-session"], r["single-session"]
        lines.append(
            f"| {r['sessions']:,} | {r['index']} | {cross['p50_ms']:.3f} | {cross['p99_ms']:.3f}"
            f" | {single['p50_ms']:.3f} | {single['p99_ms']:.3f} |"
        )
    growth = growth_to(sessions, GROWTH_AT)
    if growth is not None:
        lines += [
            "",
            f"From {rows[0]['sessions']} to {GROWTH_AT:,} sessions (target <= {SESSIONS_GROWTH}x):"
            + "; ".join(
                f" {mode} p50 {growth[f'{mode} p50_ms']:.2f}x, p99 {growth[f'{mode} p99_ms']:.2f}x"
                for mode in SESSION_MODES
            )
            + ".",
        ]
    worst = max(sessions["ratios"].values(), default=1.0)
    verdict = "met" if worst <= SESSIONS_GROWTH else f"MISSED by {worst - SESSIONS_GROWTH:.2f}x"
    lines += [
        "",
        f"Largest growth over {rows[0]['sessions']} session(s) at any count, p50 or p99:"
        f" {worst:.2f}x (target <= {SESSIONS_GROWTH}x): {verdict}.",
    ]
    return lines


def clustered_lines(cl: dict[str, Any]) -> list[str]:
    sources = ", ".join(f"{name}: {n} conversations" for name, n in cl["sources"].items())
    best = cl["smallest_ef_meeting_target"]
    lines = [
        f"{cl['texts']:,} distinct texts ({sources}; every turn, probe and read a replay"
        f" embeds), vectors from `{cl['embedder']}` through the embedding cache. {cl['held_out']} texts"
        f" are held out as queries; the rest are copied to {cl['size']:,} memories, each copy"
        f" its text's vector plus Gaussian noise of norm ~{cl['noise']} re-normalised (mean"
        f" cosine to its source {cl['copy_cosine']:.3f}; copies stay below the merge"
        f" threshold). {cl['memories']:,} memories after the build"
        f" ({cl['build_s']:.0f} s). Then the random-vector scenario's engine operations.",
        "",
        f"Approximate index quality: the atlas-wide `{cl['index']}` index"
        + (f" ({cl['params']})" if cl["index"] == "hnsw" else " (exact at this size)")
        + " against exact search (flat inner product over the same vectors), recall@10 of"
        " a 40-candidate search as retrieval asks; search CPU time per query.",
        "",
        "| efSearch | recall@10 held-out texts | CPU p50 / p99 ms | recall@10 perturbed texts"
        " | CPU p50 / p99 ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    for row in cl["by_ef"]:
        shipped = " (default)" if row["ef_search"] == cl["default_ef"] else ""
        cells = [
            f"{row[f'recall_{name}']:.3f} | {fmt_ms(row[f'search_{name}']['cpu_p50_ms'])} /"
            f" {fmt_ms(row[f'search_{name}']['cpu_p99_ms'])}"
            for name in ("text", "perturbed")
        ]
        lines.append(f"| {row['ef_search']}{shipped} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        f"Smallest efSearch with recall@10 >= {cl['target_recall']} on both query sets:"
        f" {best if best is not None else 'none of those measured'}.",
        "",
        "| operation | p50 ms | p99 ms | CPU p50 / p99 ms | n | notes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for row in cl["ops"]:
        lines.append(
            f"| {row['op']} | {fmt_ms(row['p50_ms'])} | {fmt_ms(row['p99_ms'])}"
            f" | {fmt_ms(row['cpu_p50_ms'])} / {fmt_ms(row['cpu_p99_ms'])} | {row['n']} | {row['note']} |"
        )
    return lines


def snapshot_lines(snapshots: list[dict[str, Any]]) -> list[str]:
    lines = [
        "`save_snapshot` / `load_snapshot` on each size's engine atlas (random vectors), wall"
        " ms (median); load = read and check the file + restore (table, sessions, edges,"
        " stored HNSW graph, then indexing). Compressed: the same members with zip deflate.",
        "",
        "| memories | format | export | load | of which read + check | restore | indexing"
        " | file MiB | compressed MiB (write ms) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in sorted(snapshots, key=lambda s: s["size"]):
        lines.append(
            f"| {s['memories']:,} | {s['format']} | {fmt_ms(s['export']['wall_ms'])}"
            f" | {fmt_ms(s['load_ms'])} | {fmt_ms(s['read + check']['wall_ms'])}"
            f" | {fmt_ms(s['restore (with indexing)']['wall_ms'])} | {fmt_ms(s['indexing']['wall_ms'])}"
            f" | {s['file_mib']} | {s['compressed']['file_mib']}"
            f" ({fmt_ms(s['compressed']['write_ms'])}) |"
        )
    return lines


def judge_lines(j: dict[str, Any]) -> list[str]:
    lines = [
        f"Judge `{j['judge']}` on every labelled pair of `tests/data/conflict_pairs*.jsonl`"
        f" ({j['pairs']} pairs, each seen once, as the write path judges a candidate: the"
        " atlas's vectors and cosine given, the pair's claims and sentences read first),"
        f" its first look, wall time: mean {fmt_ms(j['mean_ms'])} ms,"
        f" p50 {fmt_ms(j['p50_ms'])} ms, p99 {fmt_ms(j['p99_ms'])} ms, max {fmt_ms(j['max_ms'])} ms"
        f" (budget {j['budget_ms']:g} ms per pair at p99).",
    ]
    if "read_cpu_p99_ms" in j:
        lines += [
            "",
            f"Informational: reading a pair's claims and sentences with MiniLM, CPU p50"
            f" {fmt_ms(j['read_cpu_p50_ms'])} / p99 {fmt_ms(j['read_cpu_p99_ms'])} ms (a write"
            " reads all its candidates in one batch, counted in the add line); the second look,"
            f" off the write path, {j['second_look_pairs']} open pairs at"
            f" {j['second_look_cpu_ms']:g} ms of CPU each.",
        ]
    return lines


def dev_replay_lines(dev: dict[str, Any]) -> list[str]:
    lines = [
        f"`benchmarks/real_recall.py`'s replay of the LoCoMo dev split ({dev['conversations']}"
        f" conversations, {dev['turns']:,} turns), atlas policy with shipped defaults and"
        " cached MiniLM embeddings; wall ms per turn over all conversations.",
        "",
        "| budget | ms/turn | recall@10 | retention |",
        "|---|---:|---:|---:|",
    ]
    for c in dev["cells"]:
        lines.append(
            f"| {c['budget']} | {fmt_ms(c['ms_per_turn'])} | {c['recall']:.3f} | {c['retention']:.2f} |"
        )
    return lines


def figures(results: dict[str, Any]) -> dict[str, Any]:
    """Plotly figures of what is compared: retrieve cost against session count, recall
    against efSearch (clustered and random vectors), snapshot time against size."""
    import plotly.graph_objects as go

    out: dict[str, Any] = {}
    if "sessions" in results:
        rows = results["sessions"]["rows"]
        fig = go.Figure()
        for mode in SESSION_MODES:
            for stat, dash in (("p50_ms", "dot"), ("p99_ms", "solid")):
                fig.add_trace(
                    go.Scatter(
                        x=[r["sessions"] for r in rows],
                        y=[r[mode][stat] for r in rows],
                        name=f"{mode} {stat[:3]}",
                        line={"dash": dash},
                    )
                )
        fig.add_hline(y=SESSIONS_P99_MS, line_dash="dash", annotation_text="p99 target")
        fig.update_layout(
            title=f"retrieve CPU ms, {rows[0]['size']:,} memories over N sessions",
            xaxis={"type": "log", "title": "sessions"},
            yaxis={"title": "ms", "rangemode": "tozero"},
            width=900,
            height=500,
        )
        out["sessions"] = fig
    recall = _recall_figure(results)
    if recall is not None:
        out["recall"] = recall
    snapshots = sorted(
        (r["snapshot"] for r in results["sizes"] if "snapshot" in r), key=lambda s: s["size"]
    )
    if snapshots:
        fig = go.Figure()
        xs = [s["memories"] for s in snapshots]
        fig.add_trace(
            go.Scatter(x=xs, y=[s["export"]["wall_ms"] for s in snapshots], name="export")
        )
        fig.add_trace(go.Scatter(x=xs, y=[s["load_ms"] for s in snapshots], name="load"))
        fig.add_hline(y=snapshots[-1]["target_ms"], line_dash="dash", annotation_text="target")
        fig.update_layout(
            title="snapshot export and load, wall ms (log-log)",
            xaxis={"type": "log", "title": "memories"},
            yaxis={"type": "log", "title": "ms"},
            width=800,
            height=450,
        )
        out["snapshots"] = fig
    return out


def _recall_figure(results: dict[str, Any]) -> Any:
    import plotly.graph_objects as go

    series = []
    if "clustered" in results:
        cl = results["clustered"]
        if len(cl["by_ef"]) > 1:
            for name, label in (("text", "held-out texts"), ("perturbed", "perturbed texts")):
                series.append((f"clustered, {label}", cl["by_ef"], f"recall_{name}"))
    for r in results["sizes"]:
        by_ef = (r.get("recall") or {}).get("by_ef") or []
        if len(by_ef) > 1:
            for name in ("near", "random"):
                series.append((f"random vectors at {r['size']:,}, {name}", by_ef, f"recall_{name}"))
    if not series:
        return None
    fig = go.Figure()
    for name, rows, key in series:
        fig.add_trace(
            go.Scatter(
                x=[row["ef_search"] for row in rows], y=[row[key] for row in rows], name=name
            )
        )
    fig.add_hline(y=0.95, line_dash="dash", annotation_text="target 0.95")
    fig.update_layout(
        title="HNSW recall@10 against exact search, by efSearch",
        xaxis={"type": "log", "title": "efSearch"},
        yaxis={"title": "recall@10", "range": [0, 1.02]},
        width=900,
        height=500,
    )
    return fig
