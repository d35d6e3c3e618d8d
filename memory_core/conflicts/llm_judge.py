"""A contradiction judge that asks an OpenAI-compatible chat endpoint (off by default).

It POSTs to ``{base_url}/chat/completions`` and expects the model to answer with a JSON
object ``{"label": ..., "score": ..., "reason": ...}`` (optionally ``"kind"``). Anything
else — HTTP errors, timeouts, prose, out-of-range scores — becomes a :class:`JudgeError`
naming what was wrong, so a flaky model never silently flips a memory's status.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, cast

import httpx

from memory_core.conflicts.verdict import KINDS, LABELS, BaseJudge, Kind, Label, Verdict
from memory_core.errors import ConfigError, InputError, JudgeError, JudgeTimeoutError

DEFAULT_TIMEOUT = 30.0
"""Seconds for connect, read and write each."""
DEFAULT_MODEL = "gpt-4o-mini"
SYSTEM_PROMPT = (
    "You compare two statements stored in an assistant's memory about a user or a task. "
    "Decide whether they contradict each other (both cannot be true now: a negation, a "
    "changed value, an opposite preference or an explicit correction), are compatible "
    "(same topic, both can be true), or are unrelated (different topics). "
    'Reply with one JSON object only: {"label": "contradiction" | "compatible" | '
    '"unrelated", "score": <number 0..1, your confidence that they contradict>, '
    '"reason": "<one short sentence>", "kind": "negation" | "value_change" | "antonym" | '
    '"correction" | "none"}.'
)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class LLMJudge(BaseJudge):
    """Judge pairs with a chat model behind an OpenAI-compatible HTTP API.

    Args:
        base_url: API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is added).
        model: model name sent in the request.
        api_key: sent as a bearer token when given.
        timeout: seconds allowed for each of connect/read/write, > 0.
        json_mode: ask for ``response_format={"type": "json_object"}`` (some servers lack it).
        transport: an ``httpx`` transport, for custom networking; default is plain HTTP(S).
    """

    __slots__ = ("_client", "_json_mode", "_model", "_timeout", "_url")

    def __init__(
        self,
        *,
        base_url: str,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        json_mode: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError("base_url", base_url, "an http:// or https:// URL")
        if not model:
            raise ConfigError("model", model, "a non-empty model name")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ConfigError("timeout", timeout, "a number of seconds > 0")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._model = model
        self._timeout = float(timeout)
        self._json_mode = json_mode

    @property
    def name(self) -> str:
        return f"llm:{self._model}"

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> LLMJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        """Ask the model about ``a`` (older) and ``b`` (newer); ``similarity`` is passed along.

        Raises:
            InputError: ``a`` or ``b`` is not a non-empty string.
            JudgeTimeoutError: the endpoint did not answer in time.
            JudgeError: the endpoint failed or its reply is not a valid verdict.
        """
        for field, text in (("a", a), ("b", b)):
            if not isinstance(text, str) or not text.strip():
                raise InputError(field, "must be a non-empty string")
        reply = self._post(self._request(a, b, similarity))
        return parse_reply(_message_content(reply))

    def _request(self, a: str, b: str, similarity: float | None) -> dict[str, Any]:
        user = f"Statement A (older): {a}\nStatement B (newer): {b}"
        if similarity is not None:
            user += f"\nEmbedding cosine similarity: {similarity:.3f}"
        body: dict[str, Any] = {
            "model": self._model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user},
            ],
        }
        if self._json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _post(self, body: dict[str, Any]) -> Any:
        url = self._url
        try:
            response = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise JudgeTimeoutError(
                f"LLM judge: no answer from {url} within {self._timeout:g}s"
            ) from exc
        except httpx.HTTPError as exc:
            raise JudgeError(f"LLM judge: request to {url} failed: {exc}") from exc
        if response.status_code != 200:
            detail = response.text[:200].strip()
            raise JudgeError(f"LLM judge: {url} answered HTTP {response.status_code}: {detail}")
        try:
            return response.json()
        except ValueError as exc:
            raise JudgeError(
                f"LLM judge: {url} answered non-JSON: {response.text[:200]!r}"
            ) from exc


def _message_content(reply: Any) -> str:
    """``choices[0].message.content`` of a chat completion, or a JudgeError saying what is missing."""
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise JudgeError(
            f"LLM judge: reply has no choices[0].message.content (got {json.dumps(reply)[:200]})"
        ) from exc
    if not isinstance(content, str):
        raise JudgeError(f"LLM judge: message content is {type(content).__name__}, not text")
    return content


def parse_reply(content: str) -> Verdict:
    """Validate the model's JSON answer and turn it into a :class:`Verdict`.

    Raises:
        JudgeError: the content is not a JSON object with a valid label, score and reason.
    """
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgeError(f"LLM judge: answer is not JSON: {content[:200]!r}") from exc
    if not isinstance(data, dict):
        raise JudgeError(f"LLM judge: answer must be a JSON object, got {content[:200]!r}")
    label = data.get("label")
    if label not in LABELS:
        raise JudgeError(f"LLM judge: 'label' is {label!r}; allowed: {', '.join(LABELS)}")
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise JudgeError(f"LLM judge: 'score' is {score!r}; allowed: a number in [0, 1]")
    reason = data.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise JudgeError(f"LLM judge: 'reason' is {reason!r}; allowed: a non-empty string")
    kind = data.get("kind", "none")
    if kind not in KINDS:
        raise JudgeError(f"LLM judge: 'kind' is {kind!r}; allowed: {', '.join(KINDS)}")
    if label != "contradiction":
        kind = "none"
    return Verdict(cast(Label, label), float(score), reason.strip(), cast(Kind, kind))
