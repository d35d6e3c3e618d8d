"""The review gate's two learned signals with the real MiniLM (and the parser): which turns
are small talk, and how close MiniLM puts related and unrelated slot topics, the evidence
behind ``ContextSettings.related_topic_similarity``. The sentences and pairs are written
for this test, not taken from a conversation the project measures on."""

from __future__ import annotations

import statistics

import pytest

from memory_core.context import ContextSettings
from memory_core.context.extract.turn import default_extractor
from memory_core.embedding.base import embed_checked

pytestmark = pytest.mark.integration

RELATED = [
    ("hotel", "room"), ("hotel", "stay"), ("flight", "trip"), ("dinner", "table"),
    ("delivery", "shipping"), ("rent", "apartment"), ("check-in", "arrival"),
    ("appointment", "visit"), ("meeting", "call"), ("party", "guest"),
    ("return flight", "return leg"), ("hotel", "accommodation"), ("car rental", "rental"),
    ("order", "package"), ("ticket", "seat"), ("departure", "flight"), ("trip", "travel"),
    ("budget", "spending"), ("move", "moving"), ("interview", "panel"),
]  # fmt: skip
UNRELATED = [
    ("hotel", "knee"), ("dinner", "laptop"), ("flight", "birthday"), ("watch", "feel"),
    ("walk", "screen"), ("gym", "beach"), ("rent", "conference"), ("delivery", "wedding"),
    ("meeting", "dog"), ("table", "insurance"), ("appointment", "painting"),
    ("ticket", "weather"), ("order", "vacation"), ("party", "printer"), ("trip", "homework"),
]  # fmt: skip


def _similarities(pairs: list[tuple[str, str]]) -> list[float]:
    embedder = default_extractor().embedder
    vectors = embed_checked(embedder, [w for pair in pairs for w in pair])
    return [float(vectors[2 * i] @ vectors[2 * i + 1]) for i in range(len(pairs))]


def test_the_topic_bar_parts_related_from_unrelated_topics() -> None:
    bar = ContextSettings().related_topic_similarity
    related, unrelated = _similarities(RELATED), _similarities(UNRELATED)
    assert statistics.median(related) > bar > statistics.median(unrelated)
    assert sum(s >= bar for s in related) >= 0.7 * len(related)
    assert sum(s < bar for s in unrelated) >= 0.9 * len(unrelated)


@pytest.mark.parametrize(
    "text",
    [
        "Thank you so much, have a lovely weekend!",
        "Hey, long time no talk! How's the family?",
        "Aww, congrats on the new puppy, she looks adorable.",
        "Cheers for the help, I'll get back to you next week.",
    ],
)
def test_small_talk_is_flagged(text: str) -> None:
    assert default_extractor().extract(text).small_talk


@pytest.mark.parametrize(
    "text",
    [
        "Actually, move my appointment to Thursday afternoon.",
        "I need a hotel in Porto under 150 euros a night.",
        "Make it three tickets instead of four.",
        "Can you send the parcel to my office instead?",
    ],
)
def test_task_talk_is_not_small_talk(text: str) -> None:
    assert not default_extractor().extract(text).small_talk
