"""Simulated-conversation harness: session files, replay, metrics and baselines."""

from memory_core.harness.metrics import ConversationResult, FactOutcome, RunSummary, summarize
from memory_core.harness.policies import BASELINES, POLICIES, MemoryPolicy, make_policy
from memory_core.harness.replay import Replay, ReplaySettings, replay_all, replay_conversation
from memory_core.harness.session_format import Conversation, load_conversation

__all__ = [
    "BASELINES",
    "POLICIES",
    "Conversation",
    "ConversationResult",
    "FactOutcome",
    "MemoryPolicy",
    "Replay",
    "ReplaySettings",
    "RunSummary",
    "load_conversation",
    "make_policy",
    "replay_all",
    "replay_conversation",
    "summarize",
]
