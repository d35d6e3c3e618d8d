"""Builders for small synthetic conversations (replay, metrics, policies, explain tests)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_core.embedding.cache import CachedEmbedder
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.harness.session_format import Conversation, parse_conversation

START = datetime(2024, 7, 1, 9, 0, tzinfo=UTC)

FILLER = [
    "Okay, sounds good to me.",
    "Let me think about the weather for a moment.",
    "Could you say that again more slowly?",
    "I had pasta for lunch yesterday.",
    "The traffic downtown was terrible this morning.",
    "My neighbour is painting his fence green.",
    "I watched a documentary about penguins.",
    "The printer in the office is jammed again.",
]


def conversation_data(
    sessions: Sequence[Sequence[str]],
    facts: Sequence[tuple[Sequence[str], str, str]],
    *,
    gap_hours: float = 24.0,
    cid: str = "synthetic",
) -> dict[str, Any]:
    """JSON-ready conversation: sessions of texts, facts as (evidence ids, probe, expect).

    Turn ids are ``s{i}-t{j}`` (1-based); turns are 60 s apart, sessions ``gap_hours``.
    """
    out_sessions = []
    for i, texts in enumerate(sessions, start=1):
        start = START + timedelta(hours=gap_hours * (i - 1))
        out_sessions.append(
            {
                "id": f"s{i}",
                "started_at": start.isoformat(),
                "turns": [
                    {
                        "id": f"s{i}-t{j}",
                        "speaker": "user" if j % 2 else "assistant",
                        "text": text,
                        "at": (start + timedelta(seconds=60 * (j - 1))).isoformat(),
                    }
                    for j, text in enumerate(texts, start=1)
                ],
            }
        )
    return {
        "format": "atlas-session/1",
        "id": cid,
        "sessions": out_sessions,
        "key_facts": [
            {"id": f"kf{n}", "fact": probe, "evidence": list(ev), "probe": probe, "expect": expect}
            for n, (ev, probe, expect) in enumerate(facts, start=1)
        ],
    }


@pytest.fixture
def make_conversation() -> Callable[..., Conversation]:
    def make(*args: Any, **kwargs: Any) -> Conversation:
        return parse_conversation(conversation_data(*args, **kwargs), "test")

    return make


@pytest.fixture
def embedder() -> CachedEmbedder:
    return CachedEmbedder(HashingEmbedder(dim=128))


@pytest.fixture
def small(make_conversation: Callable[..., Conversation]) -> Conversation:
    """Two sessions; a distinctive preference early, filler after, one superseded fact."""
    s1 = [
        "My favourite colour is ultramarine blue, remember that.",
        *FILLER[:4],
        "The temporary door code is 4471 for this week only.",
        *FILLER[4:],
    ]
    s2 = [*FILLER, "Actually the door code changed, forget the old one."]
    return make_conversation(
        [s1, s2],
        [
            (["s1-t1"], "favourite colour ultramarine blue", "recalled"),
            (["s1-t6"], "temporary door code 4471", "forgotten"),
            (["s2-t9"], "door code changed", "recalled"),
        ],
    )
