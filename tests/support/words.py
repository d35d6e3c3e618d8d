"""Sentences of real words for tests that write many memories.

Templated lines (``"note 17"``) differ only in numbers and fold into one family summary
(issue #25), so tests that need many distinct memories draw words instead.
"""

from __future__ import annotations

import numpy as np

WORDS = (
    "river", "garden", "violin", "ledger", "harbor", "copper", "meadow", "lantern", "orchid",
    "basalt", "falcon", "quartz", "tundra", "saffron", "glacier", "walnut", "pepper", "marble",
    "cobalt", "thistle", "canyon", "ember", "juniper",
)  # fmt: skip


def word_sentence(rng: np.random.Generator, i: int, size: int) -> str:
    """``size`` words drawn from ``WORDS`` and the number ``i`` (distinct per ``i``)."""
    return " ".join(rng.choice(WORDS, size=size)) + f" {i}"
