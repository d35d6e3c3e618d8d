"""Shared reading and checks of the labelled pair sets' files (issue #27 point 5).

Each set written away from the judge has a test of its shape; they read the lines, fold texts
the same way (case, punctuation and spacing do not make two texts different), load through the
evaluation loader and compare against the older sets by digest only, so that no text of a held-out
part ever reaches a test's output.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from memory_core.conflicts import load_pairs

Record = dict[str, str]


def read_records(path: Path) -> list[Record]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def words(text: str) -> list[str]:
    """The folded words of a text: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9 ]", " ", text.lower()).split()


def digest(text_words: Iterable[str]) -> str:
    return hashlib.sha256(" ".join(text_words).encode()).hexdigest()


def pair_key(a: str, b: str) -> frozenset[str]:
    """A pair in either order, by the digests of its folded texts."""
    return frozenset((digest(words(a)), digest(words(b))))


def assert_loads_with_schema(
    path: Path, keys: Collection[str], label_of_kind: Mapping[str, str], styles: Collection[str]
) -> list[Record]:
    """The loader reads the lines as written, and every line has the set's keys and a
    label its kind allows; a failure names the line number only."""
    records = read_records(path)
    pairs = load_pairs(path)
    assert [(p.a, p.b, p.label) for p in pairs] == [(r["a"], r["b"], r["label"]) for r in records]
    for number, record in enumerate(records, start=1):
        assert set(record) == set(keys), number
        assert record["label"] == label_of_kind[record["kind"]], number
        assert record["style"] in styles, number
        assert words(record["a"]) != words(record["b"]), number
    return records


def older_pairs(data: Path, own: Collection[Path]) -> list[tuple[str, str]]:
    """The (a, b) texts of every other ``*.jsonl`` set in ``data``, for digest checks only."""
    pairs = []
    for path in sorted(data.glob("*.jsonl")):
        if path in own:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if isinstance(record.get("a"), str) and isinstance(record.get("b"), str):
                pairs.append((record["a"], record["b"]))
    return pairs


def assert_sizes_and_shares(dev: list[Record], test: list[Record], at_least: int) -> None:
    """Big enough, about 40 % dev by whole groups, and a contradiction share near the other
    sets' (40-50 %), so a judge's precision on one set reads like on the next."""
    records = dev + test
    assert len(records) >= at_least
    assert 0.35 <= len(dev) / len(records) <= 0.45
    share = sum(r["label"] == "contradiction" for r in records) / len(records)
    assert 0.40 <= share <= 0.50
