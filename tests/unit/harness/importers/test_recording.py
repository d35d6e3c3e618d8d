"""A recorded agent (MCP tools on a recorded atlas, real SQLite) imported and replayed."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock, MemoryRead
from memory_core.agent.attribution import attributed
from memory_core.cli import main
from memory_core.cli.mcp_server import build_server
from memory_core.embedding.hashing import HashingEmbedder
from memory_core.errors import InputError
from memory_core.harness.importers import SOURCE_IMPORTERS, ImportOptions, Source, import_source
from memory_core.harness.importers.recording import import_recording
from memory_core.harness.metrics import summarize
from memory_core.harness.replay import memory_text, replay_conversation
from memory_core.harness.session_format import (
    conversation_to_dict,
    load_conversation,
    parse_conversation,
)
from memory_core.store.engine import open_database
from memory_core.store.live import LiveRecorder
from memory_core.store.memory import MemoryStore
from memory_core.store.privacy import EventEncoder, LogContent
from memory_core.store.recording import record_snapshot
from memory_core.store.records import EventFilter
from memory_core.store.sink import EventSink

START = 1_720_000_000.0
CONFIG = AtlasConfig(session_end_mode="keep")
WRITES = [
    ("Dana", "My printer is an HP 4100 and it jams on thick paper."),
    ("assistant", "Noted: the HP 4100 jams on thick paper."),
    ("Dana", "I prefer email over phone calls for support."),
    ("Dana", "The office moves to Rotterdam in March."),
    ("assistant", "I will send the toner order to the Rotterdam office."),
    ("Dana", "My manager Priya approves purchases above 500 euros."),
    (None, "Support tickets are closed after 14 days without reply."),
    ("Dana", "I am allergic to cats, so no office cat please."),
]
READS = [  # (after this many writes, query, top_k)
    (3, "Which printer does Dana have?", 2),
    (6, "How should support contact Dana?", 3),
    (8, "Who approves purchases?", 3),
    (8, "Where is the office moving?", 2),
]


def _payload(result: Any) -> Any:
    assert not result.is_error, result
    return result.structured_content or json.loads(result.content[0].text)


async def _agent(atlas: ElasticMemoryAtlas, clock: ManualClock) -> list[list[str]]:
    """Write and read through the MCP tools; returns the ids each read got back."""
    got: list[list[str]] = []
    async with Client(build_server(atlas)) as client:
        for done, (speaker, text) in enumerate(WRITES, start=1):
            args: dict[str, Any] = {"content": text, "session_id": "support"}
            if speaker:
                args["speaker"] = speaker
            _payload(await client.call_tool("memory_write", args))
            clock.advance(60)
            for _, query, top_k in [r for r in READS if r[0] == done]:
                read = _payload(
                    await client.call_tool("memory_read", {"query": query, "top_k": top_k})
                )
                got.append([h["id"] for h in read["hits"]])
                clock.advance(30)
    return got


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[str, str, list[list[str]], ElasticMemoryAtlas]:
    """(database URL, atlas id, ids each read returned, the agent's atlas) after recording."""
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    clock = ManualClock(START)
    atlas = ElasticMemoryAtlas(CONFIG, embedder=HashingEmbedder(), clock=clock)
    recorder = LiveRecorder.start(atlas, url=url, name="helpdesk")
    try:
        # a worker thread: the e2e suite's session-wide sync_playwright keeps an event loop
        # running in the main thread, where asyncio.run() refuses to start
        with ThreadPoolExecutor(1) as pool:
            got = pool.submit(asyncio.run, _agent(atlas, clock)).result(timeout=120)
    finally:
        recorder.close()
    return url, recorder.atlas_id, got, atlas


def test_reads_are_logged_with_query_and_what_came_back(
    recorded: tuple[str, str, list[list[str]], ElasticMemoryAtlas],
) -> None:
    url, atlas_id, got, _ = recorded
    db = open_database(url)
    reads = db.events.query(
        EventFilter(atlas_id=atlas_id, types=("read",)), order_by="at", descending=False
    ).items
    db.close()
    assert [e.content for e in reads] == [q for _, q, _ in READS]
    assert [e.payload["top_k"] for e in reads] == [k for _, _, k in READS]
    assert [e.payload["returned"] for e in reads] == got
    assert all(e.session_id is None and e.payload["reinforce"] is True for e in reads)


def test_import_turns_writes_into_turns_and_reads_into_recorded_reads(
    recorded: tuple[str, str, list[list[str]], ElasticMemoryAtlas],
) -> None:
    url, _, got, atlas = recorded
    db = open_database(url)
    item = import_recording(db, "helpdesk")  # by name: only one atlas has it
    db.close()
    conv = parse_conversation(item.data, item.source)
    turns = list(conv.turns())
    assert [(t.speaker, t.text) for t in turns] == [(s or "user", text) for s, text in WRITES]
    assert [t.at for t in turns] == [START + 60 * i + 30 * _reads_before(i) for i in range(8)]
    assert [s.id for s in conv.sessions] == ["support"]
    assert conv.reads is not None
    assert [(r.query, r.top_k, r.session) for r in conv.reads] == [
        (q, k, None) for _, q, k in READS
    ]
    by_content = {n.id: n.content for n in atlas.nodes()}
    for read, ids in zip(conv.reads, got, strict=True):
        stored = [memory_text(conv.turn_by_id(t)) for t in read.returned]
        assert stored == [by_content[i] for i in ids]  # the turns behind what it got back
    assert parse_conversation(conversation_to_dict(conv), item.source) == conv


def test_replay_under_the_recorded_parameters_agrees_and_a_tiny_memory_does_not(
    recorded: tuple[str, str, list[list[str]], ElasticMemoryAtlas],
) -> None:
    url, atlas_id, _, _ = recorded
    [(_, conv)] = import_source(
        SOURCE_IMPORTERS["recording"], Source(database=url, atlas=atlas_id), ImportOptions()
    )
    embedder = HashingEmbedder()
    same = replay_conversation(conv, CONFIG, embedder=embedder).result
    assert same.agreement_at_k == 1.0
    assert [r.agreement for r in same.reads] == [1.0] * len(READS)
    tiny = replay_conversation(conv, replace(CONFIG, max_nodes=2), embedder=embedder).result
    assert tiny.agreement_at_k is not None and tiny.agreement_at_k < 1.0
    assert summarize([same, tiny]).reads == 2 * len(READS)
    assert same.metrics()["agreement_at_k"] == 1.0
    assert [r["read_id"] for r in same.to_dict()["reads"]] == ["r1", "r2", "r3", "r4"]


def test_cli_imports_then_simulate_reports_agreement(
    recorded: tuple[str, str, list[list[str]], ElasticMemoryAtlas],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, atlas_id, _, _ = recorded
    out = tmp_path / "imported"
    argv = ["import", "recording", "--database", url, "--atlas", atlas_id, "--out", str(out)]
    assert main(argv) == 0
    [path] = out.glob("*.json")
    assert "4 recorded reads" in capsys.readouterr().out
    assert load_conversation(path).reads is not None
    params = tmp_path / "p.toml"
    params.write_text('session_end_mode = "keep"\n')
    simulate = ["simulate", str(path), "--embedder", "hashing", "--params", str(params)]
    assert main([*simulate, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["summary"]["agreement_at_k"] == 1.0
    assert len(result["conversations"][0]["reads"]) == len(READS)
    assert main(simulate) == 0
    assert "agreement@k 100.0% over 4 recorded reads" in capsys.readouterr().out


def test_cli_refuses_mixed_arguments_and_missing_databases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out")
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    assert main(["import", "recording", "--database", missing, "--atlas", "x", "--out", out]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()
    assert main(["import", "recording", "x.json", "--atlas", "x", "--out", out]) == 2
    assert "recording does not take files" in capsys.readouterr().err
    assert main(["import", "recording", "--database", missing, "--out", out]) == 2
    assert "--atlas" in capsys.readouterr().err
    assert main(["import", "locomo", "a.json", "--atlas", "x", "--out", out]) == 2
    assert "locomo does not take atlas" in capsys.readouterr().err
    assert main(["import", "locomo", "--out", out]) == 2
    assert not Path(out).exists()


def test_unknown_atlas_lists_the_recorded_ones(
    recorded: tuple[str, str, list[list[str]], ElasticMemoryAtlas],
) -> None:
    url, atlas_id, _, _ = recorded
    db = open_database(url)
    with pytest.raises(InputError, match=f"{atlas_id} \\(helpdesk\\)"):
        import_recording(db, "nobody")
    db.close()


def _reads_before(write: int) -> int:
    """Reads made before write number ``write`` (0-based)."""
    return sum(1 for after, _, _ in READS if after <= write)


def _store_recording(log_content: str = "full") -> tuple[MemoryStore, str]:
    """An atlas recorded into a ``MemoryStore``: sessions a, b, then a again; a duplicate
    write merges; a tight ``max_nodes`` evicts; reads as the MCP server logs them."""
    store = MemoryStore()
    clock = ManualClock(START)
    atlas = ElasticMemoryAtlas(
        replace(CONFIG, max_nodes=3), embedder=HashingEmbedder(), clock=clock
    )
    sink = EventSink(store, atlas_name="desk", log_content=log_content).attach(atlas)

    def write(session: str, speaker: str, text: str) -> str:
        clock.advance(60)
        meta = {"speaker": speaker}
        return atlas.add(attributed(text, speaker), session_id=session, metadata=meta).id

    def read(session: str | None, query: str, returned: list[str]) -> None:
        clock.advance(30)
        event = MemoryRead(at=clock.now(), session_id=session, query=query, top_k=2)
        atlas.events.publish(replace(event, returned=tuple(returned)))

    first = write("a", "Dana", "My printer is an HP 4100.")
    write("a", "Dana", "My printer is an HP 4100.")  # merges into ``first``
    write("b", "Priya", "Purchases above 500 euros need my approval.")
    read("a", "printer model", [first])
    write("a", "assistant", "The toner is on its way.")
    write("a", "Dana", "We move to Rotterdam in March.")  # evicts the toner (lowest weight)
    read("zzz", "anything", [])
    read("a", "moving", [first, "summary-or-older"])
    record_snapshot(atlas, store.snapshots, atlas_id=sink.atlas_id, label="final")
    sink.close()
    return store, sink.atlas_id


def test_import_splits_returning_sessions_keeps_merged_writes_and_reads_speakers() -> None:
    store, atlas_id = _store_recording()
    item = import_recording(store, atlas_id)
    conv = parse_conversation(item.data, item.source)
    assert [(s.id, [t.id for t in s.turns]) for s in conv.sessions] == [
        ("a", ["a-t1", "a-t2"]),
        ("b", ["b-t1"]),
        ("a-2", ["a-2-t1", "a-2-t2"]),
    ]
    assert [(t.speaker, t.text) for t in conv.turns()] == [
        ("Dana", "My printer is an HP 4100."),  # held: its speaker from the snapshot
        ("Dana", "My printer is an HP 4100."),  # merged into it: the kept memory's speaker
        ("Priya", "Purchases above 500 euros need my approval."),
        ("assistant", "The toner is on its way."),  # evicted: its speaker from the eviction
        ("Dana", "We move to Rotterdam in March."),
    ]
    assert conv.reads is not None
    assert [(r.session, r.returned) for r in conv.reads] == [
        ("a", ("a-t1",)),
        (None, ()),  # a session without writes: every session
        ("a-2", ("a-t1",)),  # the session's latest part; an untraced memory left out
    ]
    assert "1 memories returned by reads were not created by a recorded write" in (conv.description)


def test_a_redacted_recording_cannot_be_imported() -> None:
    store, atlas_id = _store_recording(log_content="redacted")
    with pytest.raises(InputError, match="log_content redacted or none"):
        import_recording(store, atlas_id)


@pytest.mark.parametrize(
    ("policy", "content"), [("full", "printer model"), ("redacted", None), ("none", None)]
)
def test_a_read_query_follows_the_log_content_policy(policy: str, content: str | None) -> None:
    event = MemoryRead(at=START, query="printer model", top_k=2, returned=("m1",))
    record = EventEncoder("atlas", LogContent(policy)).encode(event)
    assert record.content == content and record.type == "read"
    assert record.payload["returned"] == ["m1"] and "query" not in record.payload
    assert ("content_sha256" in record.payload) == (policy == "redacted")
