"""LLM clients for the agent loop: a protocol, an OpenAI-compatible HTTP client (off by
default, configured by URL) and an offline rule-based responder for demos and tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import httpx

from memory_core.errors import AtlasError, InputError


class LLMError(AtlasError, RuntimeError):
    """The language model endpoint failed or answered something unusable."""


@dataclass(slots=True, frozen=True)
class ChatMessage:
    role: str
    content: str


@runtime_checkable
class LLMClient(Protocol):
    """Anything that turns chat messages into one reply."""

    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[ChatMessage]) -> str: ...


class OpenAICompatibleClient:
    """POSTs to ``{base_url}/chat/completions`` (OpenAI, vLLM, llama.cpp, Ollama, ...)."""

    def __init__(
        self, base_url: str, *, model: str, api_key: str | None = None, timeout: float = 30.0
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InputError("base_url", f"must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(timeout=timeout, headers=headers)

    @property
    def name(self) -> str:
        return f"openai-compatible:{self.model}"

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        payload = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        try:
            response = self._http.post(f"{self.base_url}/chat/completions", json=payload)
            response.raise_for_status()
            return str(response.json()["choices"][0]["message"]["content"])
        except httpx.HTTPError as exc:
            raise LLMError(f"LLM endpoint {self.base_url} failed: {exc}") from exc
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise LLMError(
                f"LLM endpoint {self.base_url} returned an unexpected body: {exc}"
            ) from exc

    def close(self) -> None:
        self._http.close()


class RuleBasedResponder:
    """Offline stand-in for an LLM: acknowledges the input and cites the memories it was given.

    It makes the demo and the tests independent of any model server; it does not reason."""

    @property
    def name(self) -> str:
        return "rule-based"

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        system = next((m.content for m in messages if m.role == "system"), "")
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        recalled = [line[2:] for line in system.splitlines() if line.startswith("- ")]
        if recalled:
            return f"Noted: {user.strip()}. From memory: {recalled[0]}"
        return f"Noted: {user.strip()}."
