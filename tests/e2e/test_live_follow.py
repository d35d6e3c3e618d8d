"""The demo story in headless Chromium: connect an agent, watch its memory think.

A real MCP client from the SDK drives ``atlas mcp --record`` over stdio (its own
process, writing to a SQLite file); the dashboard server is pointed at the same file
through ``ATLAS_DATABASE_URL``. The page follows the agent; a memory the agent writes
after the page was opened must show up without any click, the sidebar filter must
survive the refresh, and closing the agent must read as "recording stopped". Both sides
use the hashing embedder, so the test measures the follow loop, not model loading.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from playwright.sync_api import Page, expect

from .conftest import streamlit_server
from .test_pages import graph_frame, metric, open_page, shoot, wait_ready

pytestmark = pytest.mark.e2e

FOLLOW_DEADLINE = 12.0
"""Seconds from the agent's write to the page showing it (sink flush 1 s + poll 2 s +
applying the event + draw; no snapshot is waited for)."""
AGENT_NAME = "travel agent"


class Agent:
    """A real MCP client on its own thread and event loop, called from the sync test."""

    def __init__(self, database_url: str, data_dir: Path) -> None:
        self._params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m", "memory_core.cli", "mcp", "--transport", "stdio",
                "--record", "--database", database_url, "--name", AGENT_NAME,
                "--embedder", "hashing", "--set", "decay_interval_seconds=0",
            ],
            env={**os.environ, "HF_HUB_OFFLINE": "1", "ATLAS_DATA_DIR": str(data_dir)},
        )  # fmt: skip
        self._calls: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        self._results: queue.Queue[object] = queue.Queue()
        self._ready = False
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)
        self._thread.start()  # starts while the dashboard server does; waited for on first use

    async def _serve(self) -> None:
        try:
            async with Client(self._params, read_timeout_seconds=120) as client:
                self._results.put("ready")
                while (call := await asyncio.to_thread(self._calls.get)) is not None:
                    self._results.put(await client.call_tool(*call))
            self._results.put("closed")
        except BaseException as exc:  # reported to the test thread
            self._results.put(exc)

    def _next(self, timeout: float) -> Any:
        if not self._ready:
            self._ready = True
            assert self._results.get(timeout=120) == "ready"
        result = self._results.get(timeout=timeout)
        if isinstance(result, BaseException):
            raise result
        return result

    def write(self, content: str) -> dict[str, Any]:
        self._calls.put(("memory_write", {"content": content, "session_id": "trip"}))
        result = self._next(60)
        assert not result.is_error, result
        payload: dict[str, Any] = result.structured_content or json.loads(result.content[0].text)
        return payload

    def close(self) -> None:
        """End the stdio session: the server exits and records its final snapshot."""
        if self._thread.is_alive():
            self._calls.put(None)
            assert self._next(60) == "closed"
            self._thread.join(30)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('agent-db') / 'atlas.db'}"


@pytest.fixture(scope="module")
def agent(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    instance = Agent(database, tmp_path_factory.mktemp("agent-data"))
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture(scope="module")
def follow_server(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("dashboard-data")
    with streamlit_server(
        data, ATLAS_DATABASE_URL=database, ATLAS_DASHBOARD_EMBEDDER="hashing"
    ) as url:
        yield url


def wait_metric(page: Page, label: str, value: int, timeout: float) -> float:
    """Seconds until the metric reads ``value`` (no user action meanwhile)."""
    start = time.monotonic()
    while True:
        try:
            if metric(page, label) == value:
                return time.monotonic() - start
        except ValueError:  # mid-render
            pass
        assert time.monotonic() - start < timeout, f"{label} is not {value} after {timeout}s"
        page.wait_for_timeout(200)


def test_the_dashboard_follows_a_recording_agent_live_screenshots(
    agent: Agent, follow_server: str, page: Page
) -> None:
    agent.write("The user prefers window seats on trains")
    agent.write("The travel budget is 5000 euros")

    # The first visit to a fresh server is a deep link: it must still get app.py's shell
    # (grouped navigation, atlas source picker), not Streamlit's bare pages/ folder mode.
    open_page(page, follow_server, "live_graph")
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_test_id("stSidebarNav").get_by_text("Demo player")).to_be_visible()
    sidebar.get_by_text("Live: follow a recording agent").click()
    wait_ready(page)
    picker = sidebar.get_by_role("combobox", name="Recording agent")
    expect(picker).to_have_value(re.compile(rf"● live · {AGENT_NAME} · \w{{8}} · \d+ events"))
    wait_metric(page, "Memories", 2, FOLLOW_DEADLINE)
    status = re.compile(r"^live · (up to date|\d+ events to apply)$")
    expect(sidebar.get_by_text(status)).to_be_visible(timeout=15_000)
    text_filter = page.get_by_label("Text contains")
    text_filter.fill("user")
    text_filter.press("Enter")
    expect(page.get_by_text(re.compile(r"^1 memories and \d+ links drawn"))).to_be_visible(
        timeout=15_000
    )
    shoot(page, "live_follow_before")

    agent.write("The user is allergic to peanuts")  # after the page was opened
    took = wait_metric(page, "Memories", 3, FOLLOW_DEADLINE)
    expect(page.get_by_text(re.compile(r"^2 memories and \d+ links drawn"))).to_be_visible(
        timeout=5_000
    )
    assert text_filter.input_value() == "user"  # the selection survived the refresh
    frame = graph_frame(page, wait_ms=10_000)
    assert frame is not None and "allergic to peanuts" in frame.content()
    assert page.locator("[data-testid=stException]").count() == 0
    shoot(page, "live_follow_after")
    print(f"new memory on screen {took:.1f} s after the agent's write")
    expect(sidebar.get_by_text("live · up to date")).to_be_visible(timeout=15_000)

    sidebar.get_by_test_id("stSidebarNav").get_by_text("Weights").click()
    expect(page.locator("h1").first).to_contain_text("Weight distribution", timeout=30_000)
    expect(page.get_by_text(re.compile(rf"followed agent {AGENT_NAME}"))).to_be_visible()

    agent.close()
    expect(sidebar.get_by_text(re.compile(r"^recording stopped · "))).to_be_visible(
        timeout=FOLLOW_DEADLINE * 1000
    )
    shoot(page, "live_follow_stopped")
