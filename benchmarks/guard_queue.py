"""``python -m benchmarks.guard_queue [--against DIR] [--each] [--cache PATH]``: what the
guard line's writes leave behind, and whether another tree leaves the same.

``judge_bench.guard_costs`` times 200 guarded adds on a 1,000-memory atlas of the
development sets' texts (``judge_bench.guard_texts``). This writes the same texts through a
``ConflictGuard`` (warmed, as the dashboard's restarted guard is), lets every pair left to
the guard's worker be judged (``settle``), and prints what the writes left: the review
queue's pairs (older text, newer text, kind, reason, suggestion), the memories retired
(superseded) and the confidence each written memory was stored with. ``--each`` settles
after every write, so the order in which pairs are judged cannot differ between trees; by
default the guard settles once after the last write, as the bench does.

``--against DIR`` runs the same in a clean tree of another commit (``git archive <rev> |
tar -x -C DIR``), each tree in a process of its own on the same texts and vectors (kept in
``--cache``), and exits 1 when the two leave anything different: the check that a change
to where a write's pairs are judged (docs/conflicts.md, "session 14: guarded add") did
not change what is judged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

STORED, ADDS = 1000, 200
"""As ``judge_bench.guard_costs``: memories stored first, then texts written through the guard."""
PAGE = 100
"""Queue items read per call (the queue's page limit is larger)."""


def left_behind(cache: Path, each: bool) -> dict[str, Any]:
    """Write the cached texts through a warmed guard (imports only ``memory_core``, so an
    older tree runs it too) and return what the writes left, each part sorted."""
    from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
    from memory_core.conflicts.guard import ConflictGuard
    from memory_core.embedding.minilm import MiniLMEmbedder
    from memory_core.engine.model import MemoryStatus

    with np.load(cache) as data:
        texts, vectors = [str(t) for t in data["texts"]], data["vectors"]
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=MiniLMEmbedder(), clock=ManualClock(0.0)
    )
    for text, vector in zip(texts[:STORED], vectors[:STORED], strict=True):
        atlas.add(text, session_id="bench", embedding=vector)
    guard = ConflictGuard(atlas)
    guard.warm()
    written = []
    for text, vector in zip(texts[STORED:], vectors[STORED:], strict=True):
        result = guard.add(text, session_id="bench", embedding=vector)
        written += [] if result.node is None else [result.node.id]
        if each:
            guard.settle()
    guard.settle()
    items = [
        item
        for offset in range(0, guard.queue.count(), PAGE)
        for item in guard.queue.items(offset=offset, limit=PAGE)
    ]
    return {
        "queued": sorted(
            [i.old_text, i.new_text, i.kind, i.reason, str(i.suggested)] for i in items
        ),
        "retired": sorted(
            [n.content, n.status.value]
            for n in atlas.nodes()
            if n.status is not MemoryStatus.ACTIVE
        ),
        "confidence": sorted(
            [atlas.get(i).content, round(float(atlas.get(i).confidence), 4)]
            for i in dict.fromkeys(written)
            if i in atlas
        ),
    }


def _run_tree(tree: Path, cache: Path, each: bool) -> dict[str, Any]:
    """:func:`left_behind` in a process whose ``memory_core`` is ``tree``'s."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "--side", str(cache)]
    done = subprocess.run(
        command + (["--each"] if each else []),
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: {done.stderr.strip()[-2000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _write_cache(cache: Path) -> None:
    from benchmarks.judge_bench import guard_texts
    from memory_core.embedding.minilm import MiniLMEmbedder

    texts = guard_texts(count=STORED + ADDS)
    np.savez(cache, texts=np.array(texts), vectors=MiniLMEmbedder().embed(texts))


def _differences(here: dict[str, Any], there: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for part in here:
        mine = {json.dumps(x) for x in here[part]}
        theirs = {json.dumps(x) for x in there[part]}
        out[part] = {
            "here": len(mine),
            "there": len(theirs),
            "only_here": sorted(mine - theirs),
            "only_there": sorted(theirs - mine),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, default=None, help="another tree to compare")
    parser.add_argument("--each", action="store_true", help="settle after every write")
    parser.add_argument("--cache", type=Path, default=None, help="texts and vectors (.npz)")
    parser.add_argument("--side", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side is not None:  # one tree's run, in its own process
        print(json.dumps(left_behind(args.side, args.each)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        cache = args.cache or Path(folder) / "guard_texts.npz"
        if not cache.exists():
            _write_cache(cache)
        here = _run_tree(Path(__file__).resolve().parent.parent, cache, args.each)
        if args.against is None:
            print(json.dumps({part: len(found) for part, found in here.items()}))
            return 0
        diff = _differences(here, _run_tree(args.against.resolve(), cache, args.each))
    print(json.dumps(diff, indent=2))
    same = all(not d["only_here"] and not d["only_there"] for d in diff.values())
    print("same" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
