"""Harness cost: replaying the long sample conversation with every embedding cached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.measure import Samples
from memory_core import AtlasConfig
from memory_core.embedding.base import Embedder
from memory_core.harness.replay import embed_conversation, replay_conversation
from memory_core.harness.session_format import load_conversation

SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"
CONVERSATION = SAMPLES / "companion-long.json"
SHORT_CONVERSATION = SAMPLES / "debugging-assistant.json"


def replay_costs(
    embedder: Embedder, *, repeats: int = 3, path: Path = CONVERSATION
) -> dict[str, Any]:
    """Wall time of ``replay_conversation`` with precomputed vectors (shipped defaults)."""
    conversation = load_conversation(path)
    vectors = embed_conversation(conversation, embedder)
    turns = sum(len(s.turns) for s in conversation.sessions)
    samples = Samples(op="replay", impl="engine", size=turns)
    for _ in range(repeats):
        samples.time(
            lambda: replay_conversation(
                conversation, AtlasConfig(), embedder=embedder, vectors=vectors
            )
        )
    summary = samples.summary()
    return {
        "conversation": path.name,
        "turns": turns,
        "sessions": len(conversation.sessions),
        "embedder": embedder.name,
        "repeats": repeats,
        "seconds_p50": summary["p50_ms"] / 1e3,
        "turns_per_s": turns / (summary["p50_ms"] / 1e3),
    }
