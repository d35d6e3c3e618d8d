"""Record once, replay under any parameters: a real MCP client drives `atlas mcp --record`
over stdio (real MiniLM); the recording is imported and replayed with its reads."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memory_core.cli import main
from memory_core.embedding.minilm import default_embedder
from memory_core.engine.config import AtlasConfig
from memory_core.harness.replay import replay_conversation
from memory_core.harness.session_format import load_conversation

pytestmark = pytest.mark.integration

SETTINGS = ["decay_interval_seconds=0"]  # the server's --set, and the replay's configuration
WRITES = [
    ("Dana", "My printer is an HP 4100 and it jams on thick paper."),
    ("Dana", "I prefer email over phone calls for support."),
    ("Dana", "The office moves to Rotterdam in March."),
    ("assistant", "I will send the toner order to the Rotterdam office."),
    ("Dana", "My manager Priya approves purchases above 500 euros."),
    ("Dana", "I am allergic to cats, so no office cat please."),
]
READS = [  # (after this many writes, query, top_k)
    (2, "Which printer does Dana use?", 2),
    (4, "Where is the office moving?", 2),
    (6, "Who approves purchases?", 3),
    (6, "How should support contact Dana?", 2),
]


def _payload(result: Any) -> Any:
    assert not result.is_error, result
    return result.structured_content or json.loads(result.content[0].text)


async def _agent(url: str, data_dir: Path) -> list[list[str]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_core.cli", "mcp", "--record", "--database", url, "--name", "desk"]
        + [arg for setting in SETTINGS for arg in ("--set", setting)],
        env={**os.environ, "HF_HUB_OFFLINE": "1", "ATLAS_DATA_DIR": str(data_dir)},
    )
    got: list[list[str]] = []
    async with Client(params, read_timeout_seconds=120) as client:
        for done, (speaker, text) in enumerate(WRITES, start=1):
            args = {"content": text, "session_id": "support", "speaker": speaker}
            _payload(await client.call_tool("memory_write", args))
            for _, query, top_k in [r for r in READS if r[0] == done]:
                read = _payload(
                    await client.call_tool("memory_read", {"query": query, "top_k": top_k})
                )
                got.append([h["content"] for h in read["hits"]])
    return got


def test_a_recorded_agent_imports_and_replays_with_full_agreement(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    # a fresh thread: Playwright's sync API may leave an event loop running in the main thread
    with ThreadPoolExecutor(1) as pool:
        got = pool.submit(asyncio.run, _agent(url, tmp_path)).result(timeout=300)
    assert all(got)

    out = tmp_path / "sessions"
    assert (
        main(["import", "recording", "--database", url, "--atlas", "desk", "--out", str(out)]) == 0
    )
    [path] = out.glob("recording-desk-*.json")
    conv = load_conversation(path)
    assert [(t.speaker, t.text) for t in conv.turns()] == WRITES
    assert conv.reads is not None
    assert [(r.query, r.top_k) for r in conv.reads] == [(q, k) for _, q, k in READS]
    for read, contents in zip(conv.reads, got, strict=True):
        said = [conv.turn_by_id(t) for t in read.returned]
        assert [f"{t.speaker}: {t.text}" for t in said] == contents

    config = AtlasConfig().with_overrides(SETTINGS)
    embedder = default_embedder()
    same = replay_conversation(conv, config, embedder=embedder).result
    assert same.agreement_at_k == 1.0, [r.to_dict() for r in same.reads]
    tiny = replay_conversation(conv, replace(config, max_nodes=1), embedder=embedder).result
    assert tiny.agreement_at_k is not None and tiny.agreement_at_k < 1.0
