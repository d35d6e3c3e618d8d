"""The playground's one exchange: recall what a message brings back, then remember it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.atlas import ElasticMemoryAtlas
from memory_core.dashboard.graph_view import label
from memory_core.errors import InputError
from memory_core.model import MemoryNode, RetrievalHit

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
) -> Exchange:
    """Retrieve for ``message`` (reinforcing the hits) and, if asked, store it afterwards.

    Retrieval runs first so a message never recalls itself.
    """
    session_id = check_session_name(session_id)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError("top_k", f"must be an integer in [1, {MAX_TOP_K}], got {top_k!r}")
    hits = (
        atlas.retrieve(message, top_k, session_id=session_id, cross_session=cross_session)
        if len(atlas)
        else []
    )
    stored = atlas.add(message, session_id=session_id) if remember else None
    return Exchange(hits, stored, _reply(hits, stored))


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
