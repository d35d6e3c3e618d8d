"""Train the default judge's learned pair model (``memory_core/conflicts/pair_model.npz``).

    python -m benchmarks.train_pair_model [--out PATH] [--l2 300]

Data: the project's own labelled pair sets in ``tests/data`` (written for this project,
under its licence), never the independent sets of issue #27 (``*independent*``), which
stay the evaluation. Features: ``ClaimJudge.features`` with the learned model off (the
rules' verdict and all-MiniLM-L6-v2 vectors, Apache-2.0). Model: L2-regularised logistic
regression by Newton's method (numpy only). The decision threshold is 0.5 (see
:data:`DECISION`); the precision / recall curve with each training file held out in turn
(leave-one-file-out, so no file scores itself) is printed and saved beside the weights,
and so is the curve on :data:`SELECTION_SETS` (never trained on), the fold to choose
features and penalties by. The output names its training and selection files and their
SHA-256.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.conflicts import pair_model
from memory_core.conflicts.claim_judge import ClaimJudge, first_person
from memory_core.conflicts.claims import claims
from memory_core.conflicts.evaluation import load_pairs
from memory_core.embedding.minilm import MiniLMEmbedder

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
TRAINING_SETS = (
    "conflict_pairs.jsonl",
    "conflict_pairs_attributes_dev.jsonl",
    "conflict_pairs_attributes_test.jsonl",
    "conflict_pairs_chat_holdout.jsonl",
    "conflict_pairs_fresh.jsonl",
    "conflict_pairs_holdout.jsonl",
    "conflict_pairs_long_turns.jsonl",
    "conflict_pairs_training_more.jsonl",
)
"""The project's own sets; the independent sets are never read here. The last one
(issue #27, session 8) was written per life dimension, each pair on its own (no shared
anchor statement), casual, assistant-memory and mixed (a stored memory against a chat
turn); see docs/conflicts.md."""
SELECTION_SETS = ("conflict_pairs_scenarios.jsonl",)
"""Scored by the model trained on :data:`TRAINING_SETS`, never trained on (issue #27, third
pass). The claim rules were written against the training sets, so their held-out curve
favours whatever leans on the rules; these pairs were written after the rules, per life
topic (a statement, variants that contradict it by kind, compatible near-misses), in casual
and assistant style. Trained on, they lowered the precision on their own held-out part
(see docs/conflicts.md)."""
L2 = 300.0
DECISION = 0.5
"""The threshold: the regression's own decision point, not fitted. Two fitted rules were
tried on the held-out curve and read against the independent dev split (issue #27): the
best held-out F1 (0.225: dev precision 0.53, recall 0.82) and the most recall at held-out
precision 0.85 (0.70: dev 0.76 / 0.33); 0.5 gave dev 0.72 / 0.58. The held-out curve is
saved in the file for whoever revisits it."""
THRESHOLDS = np.round(np.arange(0.2, 0.91, 0.025), 3)


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> dict[str, np.ndarray]:
    """Standardise, then fit an L2 logistic regression (bias not penalised)."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = l2 * np.eye(z.shape[1])
    penalty[-1, -1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return {"mean": mean, "scale": scale, "weights": w[:-1], "bias": np.array(w[-1])}


def _probabilities(params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    z = ((x - params["mean"]) / params["scale"]) @ params["weights"] + params["bias"]
    return np.asarray(1.0 / (1.0 + np.exp(-z)))


def _precision_recall(p: np.ndarray, y: np.ndarray, at: float) -> tuple[float, float]:
    predicted = p >= at
    hits = float((predicted & (y > 0)).sum())
    return hits / max(float(predicted.sum()), 1.0), hits / max(float((y > 0).sum()), 1.0)


def prime(judge: ClaimJudge, embedder: MiniLMEmbedder) -> None:
    """Embed every text and piece the judge will read in large batches, once."""
    texts: set[str] = set()
    for name in (*TRAINING_SETS, *SELECTION_SETS):
        for pair in load_pairs(DATA / name):
            for text in (pair.a, pair.b):
                texts.update(
                    first_person(p) for p in (text, *(text[c.start : c.end] for c in claims(text)))
                )
    ordered = sorted(texts)
    judge.prime(embedder.name, ordered, embedder.embed(ordered))


def featurise(judge: ClaimJudge, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of the candidate pairs of one set (others never reach the model)."""
    rows, labels = [], []
    for pair in load_pairs(DATA / name):
        x = judge.features(pair.a, pair.b)
        if x is not None:
            rows.append(x)
            labels.append(float(pair.label == "contradiction"))
    return np.stack(rows), np.asarray(labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(pair_model.__file__).with_name("pair_model.npz")))
    parser.add_argument("--l2", type=float, default=L2)
    args = parser.parse_args()
    embedder = MiniLMEmbedder()
    judge = ClaimJudge(embedder=embedder, learned=False)
    prime(judge, embedder)
    sets = {name: featurise(judge, name) for name in TRAINING_SETS}
    held_p, held_y = [], []
    for name in TRAINING_SETS:
        rest = [sets[n] for n in TRAINING_SETS if n != name]
        params = fit(np.vstack([r[0] for r in rest]), np.concatenate([r[1] for r in rest]), args.l2)
        held_p.append(_probabilities(params, sets[name][0]))
        held_y.append(sets[name][1])
    p, y = np.concatenate(held_p), np.concatenate(held_y)
    threshold = DECISION
    curve = {float(t): _precision_recall(p, y, float(t)) for t in (*THRESHOLDS, DECISION)}
    x_all = np.vstack([s[0] for s in sets.values()])
    params = fit(x_all, np.concatenate([s[1] for s in sets.values()]), args.l2)
    chosen = [featurise(judge, n) for n in SELECTION_SETS]
    p_sel = _probabilities(params, np.vstack([c[0] for c in chosen]))
    y_sel = np.concatenate([c[1] for c in chosen])
    selection = {
        float(t): _precision_recall(p_sel, y_sel, float(t)) for t in (*THRESHOLDS, DECISION)
    }
    hashes = [hashlib.sha256((DATA / n).read_bytes()).hexdigest() for n in TRAINING_SETS]
    arrays: dict[str, Any] = {k: v.astype(np.float32) for k, v in params.items()}
    np.savez_compressed(
        args.out,
        **arrays,
        threshold=np.array(threshold),
        held_out_curve=np.array([(t, *pr) for t, pr in sorted(curve.items())]),
        feature_version=np.array(pair_model.FEATURE_VERSION),
        l2=np.array(args.l2),
        embedder=np.array(embedder.name),
        training_sets=np.array(TRAINING_SETS),
        training_sha256=np.array(hashes),
        selection_curve=np.array([(t, *pr) for t, pr in sorted(selection.items())]),
        selection_sets=np.array(SELECTION_SETS),
        selection_sha256=np.array(
            [hashlib.sha256((DATA / n).read_bytes()).hexdigest() for n in SELECTION_SETS]
        ),
    )
    print(
        json.dumps(
            {
                "pairs": len(x_all),
                "threshold": threshold,
                "held_out_precision_recall": curve[threshold],
                "curve": {t: [round(v, 3) for v in pr] for t, pr in curve.items()},
                "selection_precision_recall": selection[threshold],
                "out": args.out,
            }
        )
    )


if __name__ == "__main__":
    main()
