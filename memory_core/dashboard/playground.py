"""The playground's one exchange: recall what a message brings back, then remember it.

An exchange is a turn of the agent loop (``memory_core.agent.loop.TurnLoop``): with the
conflict guard as the memory when it is on, and the orchestrator's rules when given, so
"forget that" soft-deletes and a thrice-corrected statement goes to review here too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_core.agent.loop import Stored, TurnLoop
from memory_core.agent.memory import AtlasMemory, GuardedMemory, TurnMemory
from memory_core.agent.rules import Orchestrator
from memory_core.dashboard.conflict_view import automatic_supersedes, decision_lines
from memory_core.dashboard.graph_view import label
from memory_core.dashboard.limits import memory_text, session_name
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import InputError

if TYPE_CHECKING:
    from memory_core.conflicts.guard import ConflictGuard, Decision, GuardResult

MAX_TOP_K = 20


@dataclass(frozen=True, slots=True)
class Exchange:
    hits: list[RetrievalHit]
    stored: MemoryNode | None
    reply: str
    superseded: tuple[Decision, ...] = ()
    """Memories the guard retired on its own for this message (shown with undo)."""


def converse(
    atlas: ElasticMemoryAtlas,
    message: str,
    *,
    session_id: str,
    remember: bool = True,
    top_k: int = 5,
    cross_session: bool = True,
    guard: ConflictGuard | None = None,
    rules: Orchestrator | None = None,
) -> Exchange:
    """Retrieve for ``message`` (reinforcing the hits) and, if asked, store it afterwards.

    Retrieval runs first so a message never recalls itself. With a ``guard`` the message
    is stored through it, like every other write path: a contradiction of a stored
    memory is resolved or queued for review, and the reply says what happened.
    """
    session_id = session_name(session_id)
    message = memory_text(message, "message")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError("top_k", f"must be an integer in [1, {MAX_TOP_K}], got {top_k!r}")
    # stores a MemoryNode, or through the guard its GuardResult (told apart below)
    memory: TurnMemory[RetrievalHit, Any] = (
        AtlasMemory(atlas, cross_session=cross_session)
        if guard is None
        else GuardedMemory(guard, cross_session=cross_session)
    )
    loop = TurnLoop(memory, rules=rules)
    if not remember:
        hits = loop.recall(message, session_id=session_id, top_k=top_k)
        return Exchange(hits, None, _reply(hits, None))
    turn = loop.turn(message, session_id=session_id, top_k=top_k)
    result: MemoryNode | GuardResult | None = turn.done.stored
    said = _said(turn.done)
    if result is None or isinstance(result, MemoryNode):  # unguarded, or a forget request
        note = "" if guard is not None else "\nConflict guard off: not checked."
        return Exchange(turn.hits, result, _reply(turn.hits, result, said) + note)
    lines = [line for line in decision_lines(result) if not line.startswith("stored ")]
    verdict = "; ".join(lines) if lines else "no contradiction"
    return Exchange(
        turn.hits,
        result.node,
        _reply(turn.hits, result.node, said) + f"\nChecked by the conflict guard: {verdict}.",
        tuple(automatic_supersedes(result)),
    )


def _said(done: Stored[Any]) -> list[str]:
    """What the rules did on the turn, as reply lines."""
    lines = [e.message for e in done.rules]
    if done.forget is not None:
        lines.append(done.forget.message.capitalize() + ".")
    return lines


def _reply(
    hits: list[RetrievalHit], stored: MemoryNode | None, rules: list[str] | None = None
) -> str:
    if hits:
        best = hits[0]
        recalled = (
            f"Recalled {len(hits)} {'memory' if len(hits) == 1 else 'memories'}; the best "
            f"(score {best.score:.3f}) is: {label(best.node.content, 80)}"
        )
    else:
        recalled = "Nothing relevant recalled yet."
    lines = [recalled, *(rules or [])]
    if stored is not None:
        lines.append(f"Stored your message as memory {stored.id} (weight {stored.weight:.2f}).")
    return "\n".join(lines)
