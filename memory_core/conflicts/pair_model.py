"""The learned half of the default judge: a logistic regression over MiniLM pair features.

The claim rules (``claim_rules``) see what the surface shows: typed values, negations,
slots named by a few examples. Opposites without a negation ("introverted" /
"extroverted"), status changes ("married" / "single") and values in other words are
where rules run out and a learned signal helps. This model reads, for a pair of texts:

- the two texts' all-MiniLM-L6-v2 vectors (their product and absolute difference: which
  dimensions agree, which differ), and the same for the closest pair of pieces;
- what the rules found (a contradiction and its kind and score, a denial on one side only,
  other subjects, a time mark on one side, a question or request, an addition), the texts'
  cosine and their lengths.

It is a logistic regression, trained by ``benchmarks/train_pair_model.py`` on the
project's own labelled pair sets (``tests/data/conflict_pairs*.jsonl`` written for this
project, not the independent sets of issue #27) and committed as ``pair_model.npz``
(~20 kB; the file names its training sets and their hashes). Its inputs are the MiniLM
vectors the slot layer reads anyway, so it costs no extra model run: a dot product.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np

from memory_core.conflicts.claims import Claim
from memory_core.conflicts.verdict import Verdict
from memory_core.errors import ConfigError

MODEL_FILE = "pair_model.npz"
FEATURE_VERSION = 1
"""Bumped when :func:`features` changes; a model file of another version is refused."""
RULE_KINDS = ("value_change", "negation", "correction")
SCALARS = (
    "text_cosine",
    "piece_cosine",
    "rules_contradict",
    "rules_score",
    *(f"rules_{k}" for k in RULE_KINDS),
    "one_side_denies",
    "other_subjects",
    "one_side_past",
    "newer_asks",
    "older_asks",
    "newer_adds",
    "older_length",
    "newer_length",
    "rules_unrelated",
)
"""The structured features, in order, after the vector ones."""


@dataclass(frozen=True, slots=True)
class PairModel:
    """Standardisation, weights and decision threshold of the logistic regression."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float
    embedder: str
    """The sentence embedder whose vectors the model was trained on (its ``name``)."""

    def probability(self, x: np.ndarray) -> float:
        """The model's probability that the pair contradicts, from :func:`features`."""
        z = float(((x - self.mean) / self.scale) @ self.weights + self.bias)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True, slots=True)
class PairView:
    """What the model reads of one pair: both texts' and the closest pieces' vectors."""

    text_a: np.ndarray
    text_b: np.ndarray
    piece_a: np.ndarray
    piece_b: np.ndarray
    old: Claim
    new: Claim


def closest(pieces_a: np.ndarray, pieces_b: np.ndarray) -> tuple[int, int]:
    """Indexes of the closest pair of pieces (by cosine) of the two texts: rows of their
    unit vectors."""
    sims = pieces_a @ pieces_b.T
    i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
    return int(i), int(j)


def features(view: PairView, rules: Verdict, others: bool, old_asks: bool, new_asks: bool,
             lengths: tuple[int, int]) -> np.ndarray:  # fmt: skip
    """The model's input for one pair (see the module doc; :data:`SCALARS` names the tail).

    ``others``: the closest pieces are about different people; ``*_asks``: a piece of that
    text is a question or request; ``lengths``: the texts' word counts.
    """
    x, y = view.old, view.new
    scalars = [
        float(view.text_a @ view.text_b),
        float(view.piece_a @ view.piece_b),
        float(rules.label == "contradiction"),
        rules.score,
        *(float(rules.kind == k) for k in RULE_KINDS),
        float(bool(x.denied) != bool(y.denied)),
        float(others),
        float(x.past != y.past),
        float(new_asks),
        float(old_asks),
        float(y.addition),
        math.log1p(lengths[0]),
        math.log1p(lengths[1]),
        float(rules.label == "unrelated"),
    ]
    return np.concatenate(
        [
            view.text_a * view.text_b,
            np.abs(view.text_a - view.text_b),
            view.piece_a * view.piece_b,
            np.abs(view.piece_a - view.piece_b),
            np.asarray(scalars, dtype=np.float32),
        ]
    ).astype(np.float32)


@functools.cache
def load() -> PairModel:
    """The committed model (``memory_core/conflicts/pair_model.npz``), read once.

    Raises:
        ConfigError: the file is missing or was trained on other features.
    """
    return from_arrays(packaged_arrays("pair model", MODEL_FILE))


def packaged_arrays(what: str, file: str) -> dict[str, np.ndarray]:
    """The arrays of a model file shipped in this package (no pickles).

    Raises:
        ConfigError: naming ``what``, when the file is missing or unreadable.
    """
    try:
        with resources.files("memory_core.conflicts").joinpath(file).open("rb") as fh:
            data = np.load(fh, allow_pickle=False)
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise ConfigError(what, file, f"a readable model file ({exc})") from exc


def from_arrays(arrays: dict[str, np.ndarray]) -> PairModel:
    """A model from the arrays of its file (see ``benchmarks/train_pair_model.py``)."""
    version = int(arrays.get("feature_version", np.array(-1)))
    if version != FEATURE_VERSION:
        raise ConfigError("pair model feature_version", version, f"{FEATURE_VERSION}")
    return PairModel(
        mean=arrays["mean"].astype(np.float32),
        scale=arrays["scale"].astype(np.float32),
        weights=arrays["weights"].astype(np.float32),
        bias=float(arrays["bias"]),
        threshold=float(arrays["threshold"]),
        embedder=str(arrays["embedder"]),
    )
