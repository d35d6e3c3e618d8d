"""The committed cross-encoder on the real MiniLM (issue #27): it loads offline, reads a
pair the same in either order, and gets clear pairs right. Not timed (``make bench`` is).
What it still misses is in docs/conflicts.md (fifth pass): "strict vegetarian for twelve
years" / "had a steak for dinner last night" scores 0.01, world knowledge it was not taught."""

from __future__ import annotations

import pytest

from memory_core.conflicts import pair_encoder

pytestmark = [pytest.mark.integration]

CLEAR = [
    ("My wife and I just celebrated our anniversary.", "I've never been married.", True),
    ("I hate flying and always take the train.", "I fly almost every weekend, I love it.", True),
    ("I live in Lisbon.", "I live in Lisbon, near the river.", False),
    ("I work as a teacher.", "My sister works as a lawyer.", False),
    ("I used to smoke in college.", "These days I don't smoke at all.", False),
]


def test_clear_pairs_are_read_right_in_either_order() -> None:
    encoder = pair_encoder.load()
    forward = encoder.probabilities([(a, b) for a, b, _ in CLEAR])
    backward = encoder.probabilities([(b, a) for a, b, _ in CLEAR])
    assert forward == pytest.approx(backward, abs=1e-5)  # one model run per order, averaged
    for (a, b, contradicts), p in zip(CLEAR, forward, strict=True):
        assert (p >= 0.5) == contradicts, (a, b, p)
