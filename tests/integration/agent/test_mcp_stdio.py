"""A real MCP client from the SDK talks to `atlas mcp` over stdio, with the real MiniLM model."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.integration

FACTS = [
    "The user prefers high-speed rail over flights for business trips",
    "The travel budget for the Berlin trip is capped at 5000 euros",
    "Finance must be in cc on every booking confirmation",
    "The user is allergic to peanuts",
    "The team stand-up meeting is at 9:30 every weekday",
]


def _payload(result: Any) -> Any:
    assert not result.is_error, result
    return result.structured_content or json.loads(result.content[0].text)


async def _session(tmp_path: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "memory_core.cli",
            "mcp",
            "--transport",
            "stdio",
            "--set",
            "decay_interval_seconds=0",
        ],
        env={**os.environ, "HF_HUB_OFFLINE": "1", "ATLAS_DATA_DIR": str(tmp_path)},
    )
    out: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=120) as client:
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        for fact in FACTS:
            _payload(
                await client.call_tool("memory_write", {"content": fact, "session_id": "trip"})
            )
        read = _payload(
            await client.call_tool(
                "memory_read",
                {"query": "How does the user like to travel?", "session_id": "trip", "top_k": 3},
            )
        )
        out["travel"] = [h["content"] for h in read["hits"]]
        read = _payload(
            await client.call_tool(
                "memory_read", {"query": "food allergies", "session_id": "trip", "top_k": 1}
            )
        )
        out["food"] = read["hits"][0]["content"]
        out["breakdown"] = read["hits"][0]["breakdown"]
        bad = await client.call_tool("memory_write", {"content": "   ", "session_id": "trip"})
        out["bad"] = (bad.is_error, bad.content[0].text)
        out["end"] = _payload(
            await client.call_tool("session_end", {"session_id": "trip", "mode": "purge"})
        )
        out["stats"] = _payload(await client.call_tool("memory_stats", {}))
        graph = await client.read_resource("atlas://graph")
        out["graph"] = json.loads(graph.contents[0].text)
    return out


def test_write_read_rank_and_purge_over_stdio(tmp_path: Path) -> None:
    # a fresh thread: Playwright's sync API may leave an event loop running in the main thread
    with ThreadPoolExecutor(max_workers=1) as pool:
        out = pool.submit(lambda: asyncio.run(_session(tmp_path))).result()
    assert out["tools"] == [
        "memory_forget",
        "memory_read",
        "memory_stats",
        "memory_write",
        "session_end",
    ]
    assert out["travel"][0] == FACTS[0]
    assert out["food"] == FACTS[3]
    assert {"dense", "lexical", "relevance", "weight", "final"} <= set(out["breakdown"])
    assert out["bad"][0] is True and "content" in out["bad"][1] and "empty" in out["bad"][1]
    assert out["end"]["affected"] == len(FACTS)
    assert out["stats"]["nodes"] == 0
    assert out["graph"]["nodes"] == [] and out["graph"]["edges"] == []
