"""The OpenAI-compatible client against a real HTTP server on loopback."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest

from memory_core.agent import ChatMessage, LLMError, OpenAICompatibleClient
from memory_core.errors import InputError


class _Handler(BaseHTTPRequestHandler):
    reply: object = {"choices": [{"message": {"content": "hello from the fake"}}]}
    status = 200
    seen: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        data = json.dumps(type(self).reply).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()
    _Handler.reply = {"choices": [{"message": {"content": "hello from the fake"}}]}
    _Handler.status = 200


def test_complete_posts_messages_and_returns_content(server: str) -> None:
    client = OpenAICompatibleClient(server, model="tiny")
    assert client.complete([ChatMessage("user", "hi")]) == "hello from the fake"
    assert _Handler.seen[-1] == {"model": "tiny", "messages": [{"role": "user", "content": "hi"}]}
    client.close()


def test_http_error_becomes_llm_error(server: str) -> None:
    _Handler.status = 500
    client = OpenAICompatibleClient(server, model="tiny")
    with pytest.raises(LLMError, match="failed"):
        client.complete([ChatMessage("user", "hi")])


def test_unexpected_body_becomes_llm_error(server: str) -> None:
    _Handler.reply = {"nope": 1}
    client = OpenAICompatibleClient(server, model="tiny")
    with pytest.raises(LLMError, match="unexpected body"):
        client.complete([ChatMessage("user", "hi")])


def test_base_url_is_validated() -> None:
    with pytest.raises(InputError, match="base_url"):
        OpenAICompatibleClient("localhost:8000", model="x")
