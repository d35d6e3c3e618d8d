"""Formatting retrieved memories into prompt context within a token budget.

Three formats from the first seed: a timeline (chronological), bullet points (by score)
and a short summary paragraph. Memories are taken best-first until the budget is spent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from memory_core.engine.model import RetrievalHit

Formatter = Callable[[Sequence[RetrievalHit]], str]


def estimate_tokens(text: str) -> int:
    """Rough count (about 4 characters per token for English) — good enough for budgeting."""
    return max(1, (len(text) + 3) // 4)


def within_budget(hits: Sequence[RetrievalHit], budget: int) -> list[RetrievalHit]:
    """Best-scored hits whose texts fit in ``budget`` tokens."""
    chosen, used = [], 0
    for hit in sorted(hits, key=lambda h: -h.score):
        cost = estimate_tokens(hit.node.content) + 4
        if used + cost > budget:
            continue
        chosen.append(hit)
        used += cost
    return chosen


def timeline(hits: Sequence[RetrievalHit]) -> str:
    lines = []
    for hit in sorted(hits, key=lambda h: h.node.created_at):
        when = datetime.fromtimestamp(hit.node.created_at, tz=UTC).strftime("%Y-%m-%d %H:%M")
        marker = " (from another conversation)" if hit.cross_session else ""
        lines.append(f"- [{when}] {hit.node.content}{marker}")
    return "\n".join(lines)


def bullets(hits: Sequence[RetrievalHit]) -> str:
    return "\n".join(
        f"- {h.node.content}" + (" (from another conversation)" if h.cross_session else "")
        for h in sorted(hits, key=lambda h: -h.score)
    )


def summary(hits: Sequence[RetrievalHit]) -> str:
    if not hits:
        return ""
    parts = [h.node.content.rstrip(".") for h in sorted(hits, key=lambda h: -h.score)]
    return "What I remember: " + "; ".join(parts) + "."


FORMATS: dict[str, Formatter] = {"timeline": timeline, "bullets": bullets, "summary": summary}
