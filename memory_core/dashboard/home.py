"""What the home page says: what Elastic Atlas is, who each page is for, one-click starts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory_core.dashboard.demo import (
    DEFAULT_CONVERSATION,
    DemoPlayer,
    PlayerState,
    PlayerStatus,
)

PITCH = (
    "Elastic Atlas is an embedded memory engine for AI agents: every remembered sentence is a "
    "node in a graph whose weight grows when it is recalled and fades with time, so the memory "
    "keeps what matters and forgets the rest by itself — weak, orphaned, expired or superseded "
    "memories are evicted, near-duplicates merge, contradictions go to a review queue. It runs "
    "inside the agent's process, offline. This dashboard shows that memory at work."
)


@dataclass(frozen=True, slots=True)
class Audience:
    """One kind of user and the pages that serve them."""

    who: str
    wants: str
    pages: tuple[tuple[str, str], ...]
    """(page file, what it answers) in the order to visit them."""


AUDIENCES: tuple[Audience, ...] = (
    Audience(
        "Demoer",
        "see remembering and forgetting happen",
        (
            ("pages/demo_player.py", "a conversation flowing into memory, turn by turn"),
            ("pages/live_graph.py", "the graph, its filters, skipping time ahead"),
            ("pages/playground.py", "ask and tell the memory yourself"),
        ),
    ),
    Audience(
        "Reviewer",
        "decide what the memory may believe",
        (
            ("pages/conflict_review.py", "contradictions the guard could not settle"),
            ("pages/knowledge_audit.py", "curated knowledge waiting for approval"),
            ("pages/eviction_log.py", "what was forgotten, when and why; restore"),
        ),
    ),
    Audience(
        "Tuner",
        "choose the forgetting parameters",
        (
            ("pages/key_facts.py", "your own conversation, with the facts it must keep"),
            ("pages/ab_tuning.py", "two parameter sets replayed, with a verdict; sweeps"),
            ("pages/weights.py", "how weights are spread and how they moved"),
        ),
    ),
)


def start_demo(player: DemoPlayer, files: dict[str, Path]) -> str:
    """Play the demo from wherever it is; a finished or empty player starts over.
    Returns what was done, for the record of who changed the shared atlas."""
    state = player.status().state
    action = "pressed Play"
    if state in (PlayerState.EMPTY, PlayerState.FINISHED) and files:
        player.load(files.get(DEFAULT_CONVERSATION) or next(iter(files.values())))
        action = "started the demo over" if state is PlayerState.FINISHED else action
    player.play()
    return action


def replay_warning(status: PlayerStatus, last_change: str) -> str | None:
    """What "Play the demo" would destroy for everyone, or None when it destroys nothing:
    a finished demo starts over, which removes its memories from the shared live atlas."""
    if status.state is not PlayerState.FINISHED:
        return None
    return (
        f"The demo has finished ({status.title or status.conversation_id}, turn "
        f"{status.position} of {status.total}). The live atlas is shared by every browser "
        "on this server: replaying from the start removes the demo's memories for everyone "
        f"who is watching. {last_change}"
    )
