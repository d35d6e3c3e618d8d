"""``python -m benchmarks.clustered_bench [--size N]``: the engine on clustered real text.

Random vectors are the worst case for an approximate index; real memories cluster. The
texts here are every distinct text a replay embeds from the sample sessions and, when
present, the LoCoMo dev split (read in place from ``../shared/datasets/locomo-dev``;
nothing is copied), embedded once by MiniLM through the persistent embedding cache.
``N_QUERIES`` of them are held out as queries and never stored. The rest are replicated
to ``size`` memories: each copy is its text's vector plus Gaussian noise of norm about
``NOISE``, re-normalised (cosine ~0.93 to its source and ~0.86 between two copies, below
the 0.92 ``merge_threshold``, so copies stay separate memories), stored with the text;
texts that differ only in numbers are kept once, and every copy after a text's first gets
a distinct word suffix (``datasets.copy_tag``), since the engine folds a session's lines
of one template into a family summary: without them the atlas would hold far fewer than
``size`` memories.

The atlas is built and exercised like the side-by-side scenario's engine
(``operations.build_engine`` then ``operations.run``: adds with auto-link, retrieves of
the held-out texts, ...). Before the operations run, the atlas-wide vector index's
recall@10 is measured against exact search (flat inner product over the same vectors)
for two query sets: the held-out texts, and fresh perturbations of stored texts; at the
shipped ``hnsw_ef_search`` and at each of ``EFS`` (issue #15 target: >= 0.95 at the
default).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import Dataset, copy_tag
from benchmarks.operations import START, Plan, build_engine, run
from benchmarks.real_recall import DEFAULT_DATA, load_conversations
from benchmarks.recall import recall_by_ef
from benchmarks.replay_bench import SAMPLES
from memory_core import AtlasConfig, ManualClock
from memory_core.embedding.base import Embedder, embed_checked
from memory_core.engine.families import template

NOISE = 0.4
N_QUERIES = 200
EFS = (16, 32, 64, 128, 256)
TARGET_RECALL = 0.95
QUERY_SETS = ("text", "perturbed")


def real_texts(data: Path = DEFAULT_DATA) -> tuple[list[str], dict[str, int]]:
    """Texts of the sample sessions and the dev split (when present) distinct in their
    words (the first of those differing only in numbers, ids or times), in a fixed order,
    and how many conversations each source gave."""
    from memory_core.harness.replay import conversation_texts
    from memory_core.harness.session_format import load_conversation

    sources = {
        "sample sessions": [load_conversation(p) for p in sorted(SAMPLES.glob("*.json"))],
        "LoCoMo dev": load_conversations(data),
    }
    texts = [t for convs in sources.values() for c in convs for t in conversation_texts(c)]
    by_template: dict[str, str] = {}
    for text in texts:
        by_template.setdefault(template(text)[0], text)
    return list(by_template.values()), {name: len(convs) for name, convs in sources.items()}


def perturbed(vectors: np.ndarray, rng: np.random.Generator, noise: float = NOISE) -> np.ndarray:
    """Each row plus Gaussian noise of expected norm ``noise``, scaled back to unit length."""
    out = vectors + noise * rng.standard_normal(vectors.shape, dtype=np.float32) / np.sqrt(
        vectors.shape[1]
    )
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.astype(np.float32)


def clustered_dataset(
    texts: list[str], vectors: np.ndarray, n: int, n_queries: int, seed: int = 7
) -> tuple[Dataset, np.ndarray, np.ndarray]:
    """``n`` perturbed copies of the texts left after holding ``n_queries`` out (each text
    copied equally often, in shuffled rounds), the held-out texts as queries; also
    ``n_queries`` fresh perturbations of stored texts (never stored themselves) and the
    index of each stored row's source text. Copies after the first round carry their
    round's ``copy_tag``, so no two stored texts are the same."""
    if n_queries >= len(texts):
        raise ValueError(f"n_queries must be below the {len(texts)} texts, got {n_queries}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    held, kept = order[:n_queries], order[n_queries:]
    rounds = -(-n // len(kept))
    source = np.concatenate([rng.permutation(kept) for _ in range(rounds)])[:n]
    data = Dataset(
        "clustered",
        [
            texts[i] + (copy_tag(row // len(kept) - 1) if row >= len(kept) else "")
            for row, i in enumerate(source.tolist())
        ],
        perturbed(vectors[source], rng),
        [texts[i] for i in held],
        np.ascontiguousarray(vectors[held], dtype=np.float32),
    )
    near = perturbed(vectors[rng.choice(kept, n_queries)], rng)
    return data, near, source


def clustered_costs(
    size: int,
    embedder: Embedder,
    *,
    data: Path = DEFAULT_DATA,
    smoke: bool = False,
    n_queries: int = N_QUERIES,
) -> dict[str, Any]:
    """Build ``size`` clustered memories, measure index recall, then time the operations."""
    texts, sources = real_texts(data)
    vectors = embed_checked(embedder, texts)
    plan = Plan.for_size(size, smoke=smoke)
    dataset, near, source = clustered_dataset(texts, vectors, size + plan.extra, n_queries)
    clock = ManualClock(START)
    started = time.perf_counter()
    atlas = build_engine(dataset, plan, clock)
    build_s = time.perf_counter() - started
    index = atlas._s.vectors  # the atlas-wide index as the engine built it (read-only use)
    shipped = index.ef_search
    queries = {"text": dataset.query_vectors, "perturbed": near}
    efs = sorted({shipped, *EFS}) if index.kind == "hnsw" else [shipped]  # exact: one row
    by_ef = recall_by_ef(index, queries, efs)
    cfg = AtlasConfig()
    out: dict[str, Any] = {
        "size": size,
        "memories": len(atlas),
        "texts": len(texts),
        "sources": sources,
        "embedder": embedder.name,
        "held_out": n_queries,
        "noise": NOISE,
        "copy_cosine": float(np.mean(np.sum(dataset.vectors * vectors[source], axis=1))),
        "build_s": build_s,
        "index": index.kind,
        "params": f"M={cfg.hnsw_m}, efConstruction={cfg.hnsw_ef_construction}",
        "default_ef": shipped,
        "by_ef": by_ef,
        "target_recall": TARGET_RECALL,
        "smallest_ef_meeting_target": smallest_ef(by_ef),
    }
    out["ops"] = [s.summary() for s in run(atlas, clock, dataset, plan, "engine")]
    return out


def smallest_ef(by_ef: list[dict[str, Any]]) -> int | None:
    """The smallest efSearch whose recall meets the target for every query set."""
    for row in by_ef:
        if all(row[f"recall_{name}"] >= TARGET_RECALL for name in QUERY_SETS):
            return int(row["ef_search"])
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=N_QUERIES)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo dev folder")
    args = parser.parse_args(argv)
    from memory_core.embedding import make_embedder

    out = clustered_costs(
        args.size, make_embedder("minilm"), data=args.data, n_queries=args.queries
    )
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
