"""The memory-aware agent loop, its LLM clients, context formats and remember policies."""

from memory_core.agent.context import FORMATS, estimate_tokens, within_budget
from memory_core.agent.llm import (
    ChatMessage,
    LLMClient,
    LLMError,
    OpenAICompatibleClient,
    RuleBasedResponder,
)
from memory_core.agent.loop import AgentSettings, AgentStep, MemoryAgent
from memory_core.agent.remember import (
    REMEMBER_POLICIES,
    RememberPolicy,
    everything,
    key_information,
)

__all__ = [
    "FORMATS",
    "REMEMBER_POLICIES",
    "AgentSettings",
    "AgentStep",
    "ChatMessage",
    "LLMClient",
    "LLMError",
    "MemoryAgent",
    "OpenAICompatibleClient",
    "RememberPolicy",
    "RuleBasedResponder",
    "estimate_tokens",
    "everything",
    "key_information",
    "within_budget",
]
