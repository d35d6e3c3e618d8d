"""Train the default judge's learned pair model (``memory_core/conflicts/pair_model.npz``).

    python -m benchmarks.train_pair_model [--out PATH] [--l2 300] [--leave-out FAMILY]

Data: the project's own labelled pair sets in ``tests/data`` (written for this project,
under its licence): the sets written for training and, since session 15, the spent parts of
the sets written to evaluate (:data:`FAMILIES`: each was reported once on its test part and
may now be learned from). Never read: the anchored sets (their first side is a LoCoMo turn,
third-party text: :data:`NEVER_TRAINED`), and any part held out this session (the contrast
set). Features: ``ClaimJudge.features`` with the learned model off (the rules' verdict and
all-MiniLM-L6-v2 vectors, Apache-2.0). Model: L2-regularised logistic regression by
Newton's method (numpy only). The decision threshold is 0.5 (see :data:`DECISION`); the
precision / recall curve with each training file held out in turn (leave-one-file-out, so no
file scores itself) is printed and saved beside the weights, and so is the curve on
:data:`SELECTION_SETS` (never trained on), the fold to choose features and penalties by.
``--leave-out FAMILY`` trains without one family's files (the leave-one-set-out protocol:
the whole judge is then scored on the family with that file; docs/conflicts.md, session 15).
The output names its training and selection files and their SHA-256.
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
BASE_SETS = (
    "conflict_pairs.jsonl",
    "conflict_pairs_attributes_dev.jsonl",
    "conflict_pairs_attributes_test.jsonl",
    "conflict_pairs_chat_holdout.jsonl",
    "conflict_pairs_fresh.jsonl",
    "conflict_pairs_holdout.jsonl",
    "conflict_pairs_long_turns.jsonl",
    "conflict_pairs_training_more.jsonl",
)
"""The project's own sets written before issue #27's independent sets (until session 14 the
only training data). The last one (issue #27, session 8) was written per life dimension,
each pair on its own (no shared anchor statement), casual, assistant-memory and mixed (a
stored memory against a chat turn); see docs/conflicts.md."""
FAMILIES: dict[str, tuple[str, ...]] = {
    "independent": (
        "conflict_pairs_independent_dev.jsonl",
        "conflict_pairs_independent_test.jsonl",
    ),
    "persona": ("conflict_pairs_persona_test.jsonl",),
    "edits": ("conflict_pairs_edits_dev.jsonl", "conflict_pairs_edits_test.jsonl"),
    "timelines": ("conflict_pairs_timelines_dev.jsonl", "conflict_pairs_timelines_test.jsonl"),
}
"""The sets written away from the judge to evaluate it (issue #27 point 5), by family: each
family was written by one method, so the leave-one-set-out protocol leaves a whole family
out (its dev and test parts) and scores the judge on it. Their test parts were each run
once and reported (docs/conflicts.md); from session 15 they are training data."""
TRAINING_SETS = (*BASE_SETS, *(name for files in FAMILIES.values() for name in files))
NEVER_TRAINED = (
    "anchored_pairs_dev.jsonl",
    "anchored_pairs_test.jsonl",
    "conflict_pairs_contrast_dev.jsonl",
    "conflict_pairs_contrast_test.jsonl",
)
"""Read by no training script: the anchored pairs quote LoCoMo turns (third-party text the
shipped weights must not carry), the contrast set is session 15's evaluation."""
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


def training_sets(leave_out: str | None = None) -> tuple[str, ...]:
    """:data:`TRAINING_SETS` without the files of family ``leave_out`` (None: all of them).

    Raises:
        SystemExit: ``leave_out`` names no family of :data:`FAMILIES`.
    """
    if leave_out is None:
        return TRAINING_SETS
    if leave_out not in FAMILIES:
        raise SystemExit(f"--leave-out {leave_out!r}: expected one of {', '.join(FAMILIES)}")
    return tuple(n for n in TRAINING_SETS if n not in FAMILIES[leave_out])


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


def export(
    out: str,
    trained: tuple[str, ...],
    sets: dict[str, tuple[np.ndarray, np.ndarray]],
    l2: float,
    embedder: str,
) -> dict[str, Any]:
    """Fit on ``trained`` (featurised in ``sets``), save the model file to ``out`` with its
    curves, training and selection files and their SHA-256; a summary of what it scores."""
    held_p, held_y = [], []
    for name in trained:
        rest = [sets[n] for n in trained if n != name]
        params = fit(np.vstack([r[0] for r in rest]), np.concatenate([r[1] for r in rest]), l2)
        held_p.append(_probabilities(params, sets[name][0]))
        held_y.append(sets[name][1])
    p, y = np.concatenate(held_p), np.concatenate(held_y)
    threshold = DECISION
    curve = {float(t): _precision_recall(p, y, float(t)) for t in (*THRESHOLDS, DECISION)}
    x_all = np.vstack([sets[n][0] for n in trained])
    params = fit(x_all, np.concatenate([sets[n][1] for n in trained]), l2)
    p_sel = _probabilities(params, np.vstack([sets[n][0] for n in SELECTION_SETS]))
    y_sel = np.concatenate([sets[n][1] for n in SELECTION_SETS])
    selection = {
        float(t): _precision_recall(p_sel, y_sel, float(t)) for t in (*THRESHOLDS, DECISION)
    }
    hashes = [hashlib.sha256((DATA / n).read_bytes()).hexdigest() for n in trained]
    arrays: dict[str, Any] = {k: v.astype(np.float32) for k, v in params.items()}
    np.savez_compressed(
        out,
        **arrays,
        threshold=np.array(threshold),
        held_out_curve=np.array([(t, *pr) for t, pr in sorted(curve.items())]),
        feature_version=np.array(pair_model.FEATURE_VERSION),
        l2=np.array(l2),
        embedder=np.array(embedder),
        training_sets=np.array(trained),
        training_sha256=np.array(hashes),
        selection_curve=np.array([(t, *pr) for t, pr in sorted(selection.items())]),
        selection_sets=np.array(SELECTION_SETS),
        selection_sha256=np.array(
            [hashlib.sha256((DATA / n).read_bytes()).hexdigest() for n in SELECTION_SETS]
        ),
    )
    return {
        "pairs": len(x_all),
        "threshold": threshold,
        "held_out_precision_recall": curve[threshold],
        "curve": {t: [round(v, 3) for v in pr] for t, pr in curve.items()},
        "selection_precision_recall": selection[threshold],
        "out": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(pair_model.__file__).with_name("pair_model.npz")))
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--leave-out", choices=sorted(FAMILIES), help="train without a family")
    parser.add_argument(
        "--folds", type=Path, help="also write FOLDS/pair_model_without_<family>.npz for each"
    )
    args = parser.parse_args()
    embedder = MiniLMEmbedder()
    judge = ClaimJudge(embedder=embedder, learned=False)
    prime(judge, embedder)
    sets = {name: featurise(judge, name) for name in (*TRAINING_SETS, *SELECTION_SETS)}
    trained = training_sets(args.leave_out)
    print(json.dumps(export(args.out, trained, sets, args.l2, embedder.name)))
    for family in FAMILIES if args.folds else ():
        out = str(args.folds / f"pair_model_without_{family}.npz")
        summary = export(out, training_sets(family), sets, args.l2, embedder.name)
        print(json.dumps({"without": family, **summary}))


if __name__ == "__main__":
    main()
