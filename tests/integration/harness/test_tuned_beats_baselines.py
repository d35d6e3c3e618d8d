"""The target of issue 3: the tuned defaults beat fifo, lru and random at the same
``max_nodes`` on every sample conversation — with the real MiniLM embedder.

``max_nodes`` is a quarter of each conversation's turns, so every policy must forget.
Embeddings come from the persistent cache after the first run; only replays are timed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.embedding import make_embedder
from memory_core.engine.config import AtlasConfig, preset
from memory_core.harness.metrics import ConversationResult
from memory_core.harness.replay import ReplaySettings, replay_all
from memory_core.harness.session_format import load_conversations

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"
FRACTION = 0.25
BASELINES = ("fifo", "lru", "random")


def run(policy: str) -> dict[str, ConversationResult]:
    settings = ReplaySettings(policy=policy, capacity_fraction=FRACTION, trajectory_every=10**6)
    results = replay_all(
        load_conversations([SAMPLES]),
        preset("tuned"),
        settings=settings,
        embedder=make_embedder("minilm"),
    )
    return {r.conversation_id: r for r in results}


def test_tuned_preset_is_the_default() -> None:
    assert preset("tuned") == AtlasConfig()


def test_tuned_beats_fifo_lru_random_on_every_conversation() -> None:
    tuned = run("atlas")
    baselines = {name: run(name) for name in BASELINES}
    assert len(tuned) >= 8
    table = "\n".join(
        f"{cid:30} tuned {r.recall_at_k:.2f} | "
        + " ".join(f"{b} {baselines[b][cid].recall_at_k:.2f}" for b in BASELINES)
        for cid, r in sorted(tuned.items())
    )
    for cid, result in tuned.items():
        best_baseline = max(baselines[b][cid].recall_at_k or 0.0 for b in BASELINES)
        assert (result.recall_at_k or 0.0) > best_baseline, f"{cid} not better:\n{table}"
        for b in BASELINES:  # same capacity for everyone
            assert baselines[b][cid].max_nodes == result.max_nodes
