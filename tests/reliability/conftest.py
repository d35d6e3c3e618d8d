"""Helpers shared by the reliability tests (atlases on the hashing embedder)."""

from __future__ import annotations

from typing import Any

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock

START = 1_700_000_000.0


def build(**overrides: Any) -> tuple[ElasticMemoryAtlas, ManualClock]:
    """A hashing-embedder atlas on a manual clock; RAM-pressure eviction off unless asked."""
    overrides.setdefault("memory_watermark", 1.0)
    embedder = overrides.pop("embedder", None) or HashingEmbedder(64)
    clock = ManualClock(START)
    return ElasticMemoryAtlas(AtlasConfig(**overrides), embedder=embedder, clock=clock), clock


_FIRST = [
    "amber",
    "brisk",
    "coral",
    "dusty",
    "eager",
    "frosty",
    "gentle",
    "hollow",
    "icy",
    "jolly",
    "keen",
    "lunar",
    "misty",
    "noble",
    "olive",
    "proud",
    "quiet",
    "rusty",
    "silver",
    "tidy",
    "urban",
    "vivid",
    "woolly",
    "young",
    "zesty",
    "bold",
    "calm",
    "deep",
]
_SECOND = [
    "anchor",
    "bottle",
    "candle",
    "desk",
    "engine",
    "feather",
    "garden",
    "harbor",
    "island",
    "jacket",
    "kettle",
    "ladder",
    "mirror",
    "needle",
    "orchard",
    "pillow",
    "quarry",
    "river",
    "saddle",
    "tunnel",
    "umbrella",
    "violin",
    "window",
    "yacht",
    "zipper",
    "basket",
    "cactus",
    "dragon",
    "falcon",
    "glacier",
]
_PLACES = [
    "Oslo",
    "Lima",
    "Cairo",
    "Quito",
    "Perth",
    "Hanoi",
    "Accra",
    "Tunis",
    "Sofia",
    "Riga",
    "Bern",
    "Doha",
    "Baku",
    "Male",
    "Suva",
    "Apia",
    "Lome",
    "Dili",
    "Kyiv",
    "Nuuk",
]


def distinct_texts(n: int, prefix: str = "note") -> list[str]:
    """``n`` texts that differ in words, not only in numbers: lines that differ only in
    numbers form one family and fold (issue #25), which a test of counts must not trigger."""
    if n > len(_FIRST) * len(_SECOND) * len(_PLACES):
        raise ValueError(f"at most {len(_FIRST) * len(_SECOND) * len(_PLACES)} distinct texts")
    size = len(_FIRST) * len(_SECOND)
    return [
        f"{prefix} {_FIRST[i % len(_FIRST)]} {_SECOND[(i // len(_FIRST)) % len(_SECOND)]}"
        f" in {_PLACES[(i // size) % len(_PLACES)]}"
        for i in range(n)
    ]
