"""LLMJudge against a real OpenAI-compatible fake server on 127.0.0.1 (no httpx mocks)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memory_core.conflicts import LLMJudge, make_judge
from memory_core.conflicts.llm_judge import parse_reply
from memory_core.errors import ConfigError, InputError, JudgeError, JudgeTimeoutError


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay: float = 0.0
    raw: bytes | None = None


@dataclass
class FakeChatServer:
    """Answers each POST with the next queued Reply and records what it received."""

    url: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)

    def answer(self, content: str | dict[str, Any], **kwargs: Any) -> None:
        text = content if isinstance(content, str) else json.dumps(content)
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
        self.replies.append(Reply(body=body, **kwargs))


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    state: FakeChatServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            payload = json.loads(self.rfile.read(length))
            state.requests.append((self.path, dict(self.headers), payload))
            reply = state.replies.pop(0)
            time.sleep(reply.delay)
            data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state = FakeChatServer(url=f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


@pytest.fixture
def judge(server: FakeChatServer) -> Iterator[LLMJudge]:
    with LLMJudge(base_url=server.url, model="fake-model", api_key="k-123", timeout=2) as j:
        yield j


def test_posts_an_openai_chat_request_and_returns_the_verdict(
    server: FakeChatServer, judge: LLMJudge
) -> None:
    server.answer(
        {
            "label": "contradiction",
            "score": 0.92,
            "reason": "budget changed",
            "kind": "value_change",
        }
    )
    verdict = judge.judge("The budget is 5000.", "The budget is now 6000.", similarity=0.81)
    assert (verdict.label, verdict.score, verdict.kind) == ("contradiction", 0.92, "value_change")
    assert verdict.reason == "budget changed"
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer k-123"
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    user = body["messages"][-1]["content"]
    assert "The budget is 5000." in user and "The budget is now 6000." in user
    assert "0.810" in user
    assert judge.name == "llm:fake-model"


def test_made_through_the_registry_without_json_mode(server: FakeChatServer) -> None:
    server.answer('```json\n{"label": "unrelated", "score": 0.01, "reason": "different"}\n```')
    judge = make_judge("llm", base_url=server.url + "/", json_mode=False)
    assert isinstance(judge, LLMJudge)
    try:
        verdict = judge.judge("I like tea.", "The server runs Ubuntu.")
    finally:
        judge.close()
    assert (verdict.label, verdict.kind) == ("unrelated", "none")
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert "response_format" not in body
    assert "Authorization" not in headers


def test_timeout_becomes_judge_timeout_error(server: FakeChatServer) -> None:
    server.answer({"label": "compatible", "score": 0.1, "reason": "late"}, delay=1.0)
    with (
        LLMJudge(base_url=server.url, timeout=0.2) as judge,
        pytest.raises(
            JudgeTimeoutError, match=r"no answer from .*/v1/chat/completions within 0.2s"
        ),
    ):
        judge.judge("a cat", "a dog")


def test_http_error_status_is_reported_with_its_body(
    server: FakeChatServer, judge: LLMJudge
) -> None:
    server.replies.append(Reply(status=503, body={"error": "overloaded"}))
    with pytest.raises(JudgeError, match=r"HTTP 503.*overloaded"):
        judge.judge("a cat", "a dog")


def test_unreachable_server_is_a_judge_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = LLMJudge(base_url=f"http://127.0.0.1:{port}/v1", timeout=1)
    with judge, pytest.raises(JudgeError, match=r"request to .* failed"):
        judge.judge("a cat", "a dog")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(raw=b"<html>oops</html>"), "answered non-JSON"),
        (Reply(body={"choices": []}), r"no choices\[0\].message.content"),
        (Reply(body={"choices": [{"message": {"content": None}}]}), "content is NoneType"),
    ],
)
def test_malformed_completions_are_judge_errors(
    server: FakeChatServer, judge: LLMJudge, reply: Reply, message: str
) -> None:
    server.replies.append(reply)
    with pytest.raises(JudgeError, match=message):
        judge.judge("a cat", "a dog")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Yes, they contradict.", "answer is not JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"label": "yes", "score": 0.5, "reason": "r"}', "'label' is 'yes'"),
        (
            '{"label": "compatible", "score": 2, "reason": "r"}',
            r"'score' is 2; allowed: a number in \[0, 1\]",
        ),
        ('{"label": "compatible", "score": true, "reason": "r"}', "'score' is True"),
        ('{"label": "compatible", "score": 0.2}', "'reason' is None"),
        (
            '{"label": "contradiction", "score": 0.9, "reason": "r", "kind": "vibes"}',
            "'kind' is 'vibes'",
        ),
    ],
)
def test_invalid_verdicts_are_judge_errors(content: str, message: str) -> None:
    with pytest.raises(JudgeError, match=message):
        parse_reply(content)


def test_kind_is_dropped_unless_contradiction() -> None:
    verdict = parse_reply(
        '{"label": "compatible", "score": 0.2, "reason": "r", "kind": "negation"}'
    )
    assert verdict.kind == "none"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"base_url": "127.0.0.1:8000"}, "base_url"),
        ({"base_url": "http://x", "model": ""}, "model"),
        ({"base_url": "http://x", "timeout": 0}, "timeout"),
        ({"base_url": "http://x", "timeout": float("inf")}, "timeout"),
    ],
)
def test_bad_configuration(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        LLMJudge(**kwargs)
    assert info.value.field == field


def test_empty_texts_are_rejected_before_any_request(
    server: FakeChatServer, judge: LLMJudge
) -> None:
    with pytest.raises(InputError, match="b: must be a non-empty string"):
        judge.judge("a cat", " ")
    assert server.requests == []
