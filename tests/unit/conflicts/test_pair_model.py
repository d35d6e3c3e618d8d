"""The learned pair model: the committed file, and how the judge lets it confirm or overrule.

The model's quality is measured on real MiniLM vectors (docs/conflicts.md); here a
constant model (zero weights, a bias) on the slot tests' fake embedder checks the
decision logic, and the committed file is checked for what the judge relies on.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory_core.conflicts import pair_model
from memory_core.conflicts.claim_judge import LEARNED_SCORE, ClaimJudge
from memory_core.embedding.minilm import MODEL_NAME
from memory_core.errors import ConfigError
from tests.unit.conflicts.test_slot_judge import SlotFakeEmbedder

VECTOR_DIM = 384


def _constant(bias: float, *, embedder: str = "slot-fake", dim: int = 4096) -> pair_model.PairModel:
    width = 4 * dim + len(pair_model.SCALARS)
    return pair_model.PairModel(
        mean=np.zeros(width, dtype=np.float32),
        scale=np.ones(width, dtype=np.float32),
        weights=np.zeros(width, dtype=np.float32),
        bias=bias,
        threshold=0.5,
        embedder=embedder,
    )


def test_the_committed_model_fits_the_features_and_names_its_training_sets() -> None:
    model = pair_model.load()
    assert model.embedder == MODEL_NAME
    assert model.weights.shape == (4 * VECTOR_DIM + len(pair_model.SCALARS),)
    assert model.mean.shape == model.scale.shape == model.weights.shape
    assert 0.0 < model.threshold < 1.0
    assert np.all(model.scale > 0)
    from importlib import resources

    with resources.files("memory_core.conflicts").joinpath(pair_model.MODEL_FILE).open("rb") as fh:
        data = np.load(fh)
        sets = [str(s) for s in data["training_sets"]]
        chosen_on = [str(s) for s in data["selection_sets"]]
    # never trained on: third-party text (the anchored pairs quote LoCoMo turns) and the
    # session's held-out contrast set
    assert sets and not any(s.startswith("anchored") or "contrast" in s for s in sets)
    # the fold that features and penalties are chosen on is never trained on
    assert chosen_on and not set(chosen_on) & set(sets)


def test_a_model_file_of_other_features_is_refused() -> None:
    arrays = {"feature_version": np.array(pair_model.FEATURE_VERSION + 1)}
    with pytest.raises(ConfigError, match="feature_version"):
        pair_model.from_arrays(arrays)


def test_a_contradiction_only_the_model_sees_goes_to_review(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pair_model, "load", lambda: _constant(6.0))
    judge = ClaimJudge(embedder=SlotFakeEmbedder())
    a, b = "I'm married.", "Happily married for ten years now."
    assert not ClaimJudge(embedder=SlotFakeEmbedder(), learned=False).judge(a, b).is_contradiction
    verdict = judge.judge(a, b)
    assert verdict.is_contradiction
    assert 0.5 <= verdict.score <= LEARNED_SCORE  # below what a policy resolves alone
    assert verdict.reason.startswith("pair model p=")
    assert {s.side for s in verdict.spans} == {"a", "b"}


def test_the_model_overrules_a_rule_finding_but_not_a_slot_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pair_model, "load", lambda: _constant(-6.0))
    rules = ClaimJudge(embedder=SlotFakeEmbedder(), learned=False)
    judge = ClaimJudge(embedder=SlotFakeEmbedder())
    a, b = "I prefer a window seat.", "I never take a window seat."
    assert rules.judge(a, b).kind == "negation"
    verdict = judge.judge(a, b)
    assert verdict.label == "compatible"
    assert "pair model p=0.00" in verdict.reason
    # a slot change names the slot and both values: it stands for a reviewer to check
    a, b = "I'm an early riser, up by 5am.", "Honestly I'm a total night owl."
    assert judge.judge(a, b) == rules.judge(a, b)


def test_the_model_alone_never_speaks_for_another_subject_or_a_repeated_amount(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pair_model, "load", lambda: _constant(6.0))
    judge = ClaimJudge(embedder=SlotFakeEmbedder())
    assert not judge.judge("I'm married.", "My brother is married.").is_contradiction
    assert not judge.judge(
        "I'm married since 2010.", "Married since 2010, happily."
    ).is_contradiction


def test_a_model_of_another_embedder_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pair_model, "load", lambda: _constant(6.0, embedder=MODEL_NAME))
    a, b = "I'm married.", "Happily married for ten years now."
    assert not ClaimJudge(embedder=SlotFakeEmbedder()).judge(a, b).is_contradiction


def test_features_are_none_for_pairs_that_are_no_candidates() -> None:
    judge = ClaimJudge(embedder=SlotFakeEmbedder(), learned=False)
    assert judge.features("I'm married.", "The invoice is due Friday.") is None
    x = judge.features("I'm an early riser.", "I'm a night owl.")
    assert x is not None and x.shape == (4 * 4096 + len(pair_model.SCALARS),)
