"""Where "unrelated" ends for an embedder: the cosine distribution of text pairs that
cannot be about the same thing.

Retrieval gates a memory's weight and recency behind its relevance (issue #25): a memory
whose cosine to the query stays within what unrelated texts reach, with no word in
common, must not outrank one that is related. ``AtlasConfig.unrelated_cosine`` is that
bound. This measures it: every turn of one sample conversation against every turn of the
other conversations (different scripted topics, so the pairs are unrelated by
construction), and prints quantiles. The default is MiniLM's 99th percentile, rounded.

    python -m benchmarks.unrelated_cosine [--embedder minilm] [--folder sample_sessions]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.999)


def cross_conversation_cosines(
    texts_by_conversation: Sequence[Sequence[str]], embedder
) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Cosines of every pair of texts from two different conversations."""
    vectors = [
        np.asarray(embedder.embed(list(texts)), dtype=np.float64) for texts in texts_by_conversation
    ]
    out = []
    for i, a in enumerate(vectors):
        for b in vectors[i + 1 :]:
            out.append((a @ b.T).ravel())
    return np.concatenate(out) if out else np.empty(0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--folder", type=Path, default=ROOT / "sample_sessions")
    args = parser.parse_args(argv)
    from memory_core.embedding import make_embedder
    from memory_core.harness.session_format import load_conversations

    conversations = load_conversations([args.folder])
    texts = [[t.text for s in c.sessions for t in s.turns] for c in conversations]
    cosines = cross_conversation_cosines(texts, make_embedder(args.embedder))
    print(
        f"{len(cosines)} unrelated pairs from {len(conversations)} conversations ({args.embedder})"
    )
    for q in QUANTILES:
        print(f"  q{q * 100:g}: {np.quantile(cosines, q):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
