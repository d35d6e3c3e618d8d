"""The MCP server's memory_write / memory_read go through the agent loop: its write filter
and its rules (a forget request soft-deletes, an episode is announced)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mcp import Client

from memory_core import AtlasConfig, ElasticMemoryAtlas, MemoryStatus
from memory_core.cli.mcp_server import build_server
from memory_core.testing import HashingEmbedder, ManualClock


def _payload(result: Any) -> Any:
    assert not result.is_error, result
    return result.structured_content or json.loads(result.content[0].text)


def run(
    atlas: ElasticMemoryAtlas, calls: list[tuple[str, dict[str, Any]]], **server: Any
) -> list[Any]:
    async def talk() -> list[Any]:
        async with Client(build_server(atlas, **server)) as client:
            return [_payload(await client.call_tool(name, args)) for name, args in calls]

    # a worker thread: an e2e run may keep an event loop running in the main thread
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, talk()).result(timeout=60)


def atlas(**config: Any) -> ElasticMemoryAtlas:
    return ElasticMemoryAtlas(
        AtlasConfig(**config), embedder=HashingEmbedder(64), clock=ManualClock()
    )


def write(content: str, **args: Any) -> tuple[str, dict[str, Any]]:
    return "memory_write", {"content": content, "session_id": "s1", **args}


def test_a_forget_request_written_over_mcp_soft_deletes_instead_of_storing() -> None:
    memory = atlas()
    stored, answer, nothing = run(
        memory,
        [
            write("My budget is 100 euros", speaker="user"),
            write("forget what I just said", speaker="user"),
            ("memory_write", {"content": "forget that", "session_id": "other"}),
        ],
    )
    assert stored["content"] == "user: My budget is 100 euros"
    assert answer == {"forgotten": [stored["id"]], "message": "soft-deleted on request: 1 memory"}
    assert memory.get(stored["id"]).status is MemoryStatus.TOMBSTONED
    assert nothing["forgotten"] == [] and nothing["message"].startswith("nothing to forget")
    assert len(memory) == 1
    (read,) = run(memory, [("memory_read", {"query": "budget", "session_id": "s1"})])
    assert read["hits"] == []


def test_a_write_reports_the_rules_it_set_off() -> None:
    memory = atlas(episode_after_memories=2, merge_threshold=1.0)
    *_, third = run(
        memory,
        [
            write("The deadline is Friday"),
            write("Priya approves purchases"),
            write("Dana likes tea"),
        ],
    )
    assert third["rules"] == [{"rule": "episode", "message": "episode created from 2 memories"}]


def test_the_write_filter_and_rules_are_the_servers_to_choose() -> None:
    memory = atlas()
    declined, kept = run(
        memory,
        [write("ok"), write("forget that")],
        remember=lambda text, meta: text != "ok",
        rules=False,
    )
    assert declined == {"stored": False, "message": "not worth remembering (write filter)"}
    assert kept["content"] == "forget that"


def test_with_a_guard_corrections_supersede_and_reach_the_review_rule() -> None:
    from memory_core.conflicts.guard import ConflictGuard

    memory = atlas(review_after_corrections=2)
    first, second, third = run(
        memory,
        [write(f"The server has {ram} GB of RAM.") for ram in (16, 32, 64)],
        guard=ConflictGuard(memory),
    )
    assert [c["resolution"] for c in second["conflicts"]] == ["supersede"]
    assert second["conflicts"][0]["existing_id"] == first["id"]
    assert "rules" not in second
    assert third["rules"] == [
        {
            "rule": "knowledge_review",
            "message": "due for knowledge review after 2 corrections (no knowledge base attached)",
        }
    ]
    assert memory.get(first["id"]).status is MemoryStatus.SUPERSEDED
