"""The cross-encoder: the committed deltas, and when the judge asks it.

Its quality is measured on real MiniLM (docs/conflicts.md, fifth pass); the model itself
runs in ``tests/integration/conflicts/test_pair_encoder_minilm.py``. Here: the committed
file fits MiniLM's layers and names its data, and the judge (the encoder is on by
default: its second look) asks it exactly about the pairs its pair model leaves open, in
one batch per ``second_look``, never in a first look, and only with the MiniLM the band was
chosen with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources

import numpy as np
import pytest

from memory_core.conflicts import claim_judge, pair_encoder, pair_model
from memory_core.conflicts.claim_judge import SURE, ClaimJudge
from memory_core.embedding.minilm import MODEL_NAME, model_path
from tests.unit.conflicts.test_pair_model import _constant
from tests.unit.conflicts.test_slot_judge import SlotFakeEmbedder

HIDDEN, FEED_FORWARD, LAYERS = 384, 1536, 6


def _committed() -> dict[str, np.ndarray]:
    path = resources.files("memory_core.conflicts").joinpath(pair_encoder.MODEL_FILE)
    with path.open("rb") as fh:
        data = np.load(fh, allow_pickle=False)
        return {k: data[k] for k in data.files}


def test_the_committed_deltas_fit_minilm_and_name_their_data() -> None:
    arrays = _committed()
    config = json.loads((model_path() / "config.json").read_text())
    assert (config["hidden_size"], config["intermediate_size"]) == (HIDDEN, FEED_FORWARD)
    shapes = {"intermediate.dense": (FEED_FORWARD, HIDDEN), "output.dense": (HIDDEN, FEED_FORWARD)}
    layers = set()
    for key in (k for k in arrays if k.startswith("delta/") and k.endswith("/a")):
        name = key[len("delta/") : -len("/a")]
        target = next(t for t in pair_encoder.TARGETS if name.endswith(t))
        out, into = shapes.get(target, (HIDDEN, HIDDEN))
        a, b = arrays[key], arrays[f"delta/{name}/b"]
        assert a.shape[1] == into and b.shape[0] == out and a.shape[0] == b.shape[1]
        assert np.isfinite(a).all() and np.isfinite(b).all() and np.abs(b).max() > 0
        layers.add(int(name.split(".")[2]))
    assert layers and layers <= set(range(LAYERS))
    assert arrays["head_weight"].shape == (HIDDEN,)
    assert float(arrays["scale"]) > 0
    trained_on = [str(s) for s in arrays["training_sets"]]
    chosen_on = [str(s) for s in arrays["selection_sets"]]
    assert trained_on and not any(s.startswith("anchored") or "contrast" in s for s in trained_on)
    assert chosen_on and not set(chosen_on) & set(trained_on)
    assert len(arrays["training_sha256"]) == len(trained_on)


def test_logits_of_both_orders_make_one_symmetric_probability() -> None:
    z = np.array([2.0, -1.0, 0.0, -3.0])  # pairs (a, b), (c, d), then (b, a), (d, c)
    p = pair_encoder.both_orders(z)
    assert p == pytest.approx([0.7310586, 0.1192029])


class _Encoder:
    """Stands in for the cross-encoder: a fixed probability, and the pairs it was asked."""

    def __init__(self, probability: float) -> None:
        self.probability = probability
        self.asked: list[tuple[str, str]] = []

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.asked += pairs
        return np.full(len(pairs), self.probability)


class _MiniLMNamed(SlotFakeEmbedder):
    """The slot tests' fake under MiniLM's name: what the band was chosen with."""

    @property
    def name(self) -> str:
        return MODEL_NAME


A, B = "I'm married.", "Happily married for ten years now."


@pytest.mark.parametrize(("bias", "asked"), [(0.0, True), (6.0, False), (-6.0, True)])
def test_only_pairs_the_pair_model_leaves_open_reach_the_encoder(
    monkeypatch: pytest.MonkeyPatch, bias: float, asked: bool
) -> None:
    encoder = _Encoder(0.97)
    monkeypatch.setattr(pair_encoder, "load", lambda: encoder)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(bias, embedder=MODEL_NAME))
    assert (1 / (1 + np.exp(-bias)) <= SURE) == asked  # a sure "yes" only is settled
    judge = ClaimJudge(embedder=_MiniLMNamed())
    assert judge.first_look(A, B).open is asked
    assert encoder.asked == []  # a first look never runs it
    verdict = judge.judge(A, B)
    assert bool(encoder.asked) is asked
    if asked:  # the encoder's probability decides, and the reason says whose it is
        assert verdict.is_contradiction
        assert verdict.reason.startswith("second look: cross-encoder p=0.97")
        assert verdict.score <= claim_judge.LEARNED_SCORE


def test_a_sure_no_between_texts_with_nothing_in_common_is_settled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoder = _Encoder(0.97)
    monkeypatch.setattr(pair_encoder, "load", lambda: encoder)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(-6.0, embedder=MODEL_NAME))
    judge = ClaimJudge(embedder=_MiniLMNamed())
    assert judge.first_look(A, B, 0.9).open  # "married" in both: the encoder decides
    assert not judge.first_look("I'm married.", "Thanks, that's all for now.", 0.9).open


def test_a_second_look_reads_open_pairs_in_one_batch_once_in_either_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoder = _Encoder(0.1)
    monkeypatch.setattr(pair_encoder, "load", lambda: encoder)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(0.0, embedder=MODEL_NAME))
    judge = ClaimJudge(embedder=_MiniLMNamed())
    judge.read_ahead([(A, B, 0.9), ("I'm married.", "The invoice is due Friday.", 0.1)])
    assert encoder.asked == []  # reading ahead is the first look's: slots only
    other = ("I'm single.", "Happily single for ten years now.")
    looks = [judge.first_look(A, B), judge.first_look(*other), judge.first_look(A, A)]
    assert [look.open for look in looks] == [True, True, False]  # a repeat is no candidate
    verdicts = judge.second_look(looks)
    assert encoder.asked == [(A, B), other]  # one batch of the open ones
    assert verdicts[2] == looks[2].verdict
    assert not verdicts[0].is_contradiction
    assert not judge.judge(B, A).is_contradiction
    assert encoder.asked == [(A, B), other]  # read in both orders the first time


def test_the_encoder_is_not_asked_off_minilm_or_switched_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse() -> None:
        raise AssertionError("the cross-encoder was loaded")

    monkeypatch.setattr(pair_encoder, "load", refuse)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(0.0))
    ClaimJudge(embedder=SlotFakeEmbedder()).judge(A, B)  # a fake's readings
    monkeypatch.setattr(pair_model, "load", lambda: _constant(0.0, embedder=MODEL_NAME))
    judge = ClaimJudge(embedder=_MiniLMNamed(), cross_encoder=False)
    assert not judge.first_look(A, B).open
    judge.judge(A, B)


FLIGHT = ("My flight lands at 14:30.", "My flight lands at 16:05.")  # a clock time changed
COFFEE = ("I drink coffee every morning.", "I don't drink coffee.")  # a denied shared word


@pytest.mark.parametrize(("bias", "encoder_p", "opened", "contradicts"), [
    (0.5, 0.01, False, True),  # the pair model confirms: the value change is settled
    (-0.5, 0.97, True, True),  # the pair model doubts: the second look may confirm ...
    (-0.5, 0.01, True, False),  # ... or agree with the doubt
])  # fmt: skip
def test_a_value_change_the_pair_model_confirms_is_no_second_looks_to_overturn(
    monkeypatch: pytest.MonkeyPatch, bias: float, encoder_p: float, opened: bool, contradicts: bool
) -> None:
    encoder = _Encoder(encoder_p)
    monkeypatch.setattr(pair_encoder, "load", lambda: encoder)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(bias, embedder=MODEL_NAME))
    judge = ClaimJudge(embedder=_MiniLMNamed())
    look = judge.first_look(*FLIGHT, 0.9)
    assert look.open is opened
    verdict = judge.judge(*FLIGHT, 0.9)
    assert verdict.is_contradiction is contradicts
    assert bool(encoder.asked) is opened
    if contradicts:
        assert verdict.reason.startswith("time changed: '14:30' -> '16:05'")


def test_a_finding_on_words_the_pair_model_confirms_is_still_the_second_looks_to_veto(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoder = _Encoder(0.01)
    monkeypatch.setattr(pair_encoder, "load", lambda: encoder)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(0.5, embedder=MODEL_NAME))
    judge = ClaimJudge(embedder=_MiniLMNamed())
    look = judge.first_look(*COFFEE, 0.9)
    assert look.open and look.verdict.kind == "negation"  # a denial: words, not values
    assert not judge.judge(*COFFEE, 0.9).is_contradiction
    assert encoder.asked
