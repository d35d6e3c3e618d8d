"""Session summaries: a pluggable summarizer, extractive by default.

A summary becomes a ``summary`` memory linked ``summarizes`` to what it covers; its
provenance is only the memories whose text it actually contains, so the harness never
credits a summary with facts it dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(slots=True, frozen=True)
class SummaryItem:
    """One memory offered to a summarizer."""

    id: str
    text: str
    weight: float
    created_at: float


@dataclass(slots=True, frozen=True)
class Summary:
    text: str
    covered_ids: tuple[str, ...]


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, items: Sequence[SummaryItem], max_chars: int) -> Summary: ...


class ExtractiveSummarizer:
    """Keeps the heaviest memories verbatim, in time order, within a length budget."""

    __slots__ = ("max_items",)

    def __init__(self, max_items: int = 12) -> None:
        self.max_items = max_items

    def summarize(self, items: Sequence[SummaryItem], max_chars: int) -> Summary:
        chosen: list[SummaryItem] = []
        used = len("Session summary: ")
        for item in sorted(items, key=lambda i: (-i.weight, i.created_at, i.id)):
            if len(chosen) >= self.max_items:
                break
            cost = len(item.text) + 2
            if used + cost > max_chars:
                continue
            chosen.append(item)
            used += cost
        chosen.sort(key=lambda i: (i.created_at, i.id))
        text = "Session summary: " + "; ".join(i.text.rstrip(".") for i in chosen)
        return Summary(text=text, covered_ids=tuple(i.id for i in chosen))
