"""The playground's one exchange: recall what a message brings back, then remember it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_core.dashboard.conflict_view import decision_lines
from memory_core.dashboard.graph_view import label
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.conflicts.guard import ConflictGuard

SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.:\-]{0,63}$")
MAX_TOP_K = 20


@dataclass(frozen=True, slots=True)
class Exchange:
    hits: list[RetrievalHit]
    stored: MemoryNode | None
    reply: str


def check_session_name(name: str) -> str:
    """Playground session names are short and plain (they appear in charts and tables)."""
    name = name.strip()
    if not SESSION_NAME.match(name):
        raise InputError(
            "session",
            "must be 1-64 characters: letters, digits, space, '_', '.', ':' or '-', "
            "starting with a letter or digit",
        )
    return name


def converse(
    atlas: ElasticMemoryAtlas,
    message: str,
    *,
    session_id: str,
    remember: bool = True,
    top_k: int = 5,
    cross_session: bool = True,
    guard: ConflictGuard | None = None,
) -> Exchange:
    """Retrieve for ``message`` (reinforcing the hits) and, if asked, store it afterwards.

    Retrieval runs first so a message never recalls itself. With a ``guard`` the message
    is stored through it, like every other write path: a contradiction of a stored
    memory is resolved or queued for review, and the reply says what happened.
    """
    session_id = check_session_name(session_id)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError("top_k", f"must be an integer in [1, {MAX_TOP_K}], got {top_k!r}")
    hits = (
        atlas.retrieve(message, top_k, session_id=session_id, cross_session=cross_session)
        if len(atlas)
        else []
    )
    if not remember:
        return Exchange(hits, None, _reply(hits, None))
    if guard is None:
        stored = atlas.add(message, session_id=session_id)
        return Exchange(hits, stored, _reply(hits, stored) + "\nConflict guard off: not checked.")
    result = guard.add(message, session_id=session_id)
    checked = [line for line in decision_lines(result) if not line.startswith("stored ")]
    verdict = "; ".join(checked) if result.decisions else "no contradiction"
    return Exchange(
        hits,
        result.node,
        _reply(hits, result.node) + f"\nChecked by the conflict guard: {verdict}.",
    )


def _reply(hits: list[RetrievalHit], stored: MemoryNode | None) -> str:
    if hits:
        best = hits[0]
        recalled = (
            f"Recalled {len(hits)} {'memory' if len(hits) == 1 else 'memories'}; the best "
            f"(score {best.score:.3f}) is: {label(best.node.content, 80)}"
        )
    else:
        recalled = "Nothing relevant recalled yet."
    if stored is None:
        return recalled
    return f"{recalled}\nStored your message as memory {stored.id} (weight {stored.weight:.2f})."
