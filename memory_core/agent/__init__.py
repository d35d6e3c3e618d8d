"""The memory-aware agent loop (the one path of every turn), its memories, the
orchestrator's rules, LLM clients, context formats and remember policies."""

from memory_core.agent.context import FORMATS, estimate_tokens, within_budget
from memory_core.agent.intent import IntentDetector
from memory_core.agent.llm import (
    ChatMessage,
    LLMClient,
    LLMError,
    OpenAICompatibleClient,
    RuleBasedResponder,
)
from memory_core.agent.loop import (
    AgentSettings,
    AgentStep,
    MemoryAgent,
    Responder,
    Stored,
    Turn,
    TurnLoop,
)
from memory_core.agent.memory import AtlasMemory, GuardedMemory, TurnMemory
from memory_core.agent.remember import (
    REMEMBER_POLICIES,
    RememberPolicy,
    everything,
    key_information,
)
from memory_core.agent.rules import RULES, ForgetOutcome, Orchestrator

__all__ = [
    "FORMATS",
    "REMEMBER_POLICIES",
    "RULES",
    "AgentSettings",
    "AgentStep",
    "AtlasMemory",
    "ChatMessage",
    "ForgetOutcome",
    "GuardedMemory",
    "IntentDetector",
    "LLMClient",
    "LLMError",
    "MemoryAgent",
    "OpenAICompatibleClient",
    "Orchestrator",
    "RememberPolicy",
    "Responder",
    "RuleBasedResponder",
    "Stored",
    "Turn",
    "TurnLoop",
    "TurnMemory",
    "estimate_tokens",
    "everything",
    "key_information",
    "within_budget",
]
