"""Tune on your own agent, end to end in headless Chromium (docs/tune-your-agent.md).

A real MCP client from the SDK drives ``atlas mcp --record`` over stdio, writing and
reading as a support agent would, into the data folder's default database. ``atlas import
recording`` turns the recording into a conversation; the "Mark key facts" page marks two
of its turns, the A/B tuning page replays it under two presets, and the winner is
exported as TOML, which loads back as that preset. Every step is what the walkthrough
tells a person to do, with the same defaults.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from playwright.sync_api import Page, expect

from memory_core.dashboard.tuning import EDITABLE_FIELDS, build_config
from memory_core.engine.config import PRESETS, AtlasConfig, parse_literal
from memory_core.harness.session_format import load_conversation

from .conftest import ROOT, streamlit_server
from .test_pages import LOAD_TIMEOUT, open_page, shoot, wait_ready

pytestmark = pytest.mark.e2e

AGENT = "helpdesk"
EMBEDDER = os.environ.get("ATLAS_E2E_EMBEDDER", "minilm")  # the agent's, like the dashboard's
PRESET_A, PRESET_B = "seed-linear", "tuned"
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    # (tool, arguments): two sessions of a support agent for one user
    ("memory_write", {"session_id": "monday", "speaker": "Dana", "content": "Hi, it's Dana again."}),
    ("memory_write", {"session_id": "monday", "speaker": "Dana",
                      "content": "My printer is an HP LaserJet 4100 and it jams on thick paper."}),
    ("memory_write", {"session_id": "monday", "speaker": "Dana", "content": "Thanks, that helps."}),
    ("memory_write", {"session_id": "monday", "speaker": "Dana",
                      "content": "Please contact me by email, never by phone."}),
    ("memory_read", {"query": "Which printer does Dana have?", "top_k": 2}),
    ("memory_write", {"session_id": "monday", "speaker": "Dana", "content": "Okay, talk soon!"}),
    ("memory_write", {"session_id": "friday", "speaker": "Dana", "content": "Good morning."}),
    ("memory_write", {"session_id": "friday", "speaker": "Dana",
                      "content": "Our office moves to Utrecht on 1 March."}),
    ("memory_write", {"session_id": "friday", "speaker": "Dana",
                      "content": "My manager Priya approves purchases above 500 euros."}),
    ("memory_read", {"query": "How does Dana want to be contacted?", "top_k": 3}),
    ("memory_write", {"session_id": "friday", "speaker": "Dana",
                      "content": "The LaserJet jammed again this morning."}),
    ("memory_write", {"session_id": "friday", "speaker": "Dana", "content": "Sounds good, thanks."}),
    ("memory_read", {"query": "Who signs off on purchases?", "top_k": 3}),
]  # fmt: skip
MARKS = [  # (the candidate's text, the probe as a person words it)
    ("HP LaserJet 4100", "What printer model does Dana use?"),
    ("Priya approves", "Who has to approve Dana's bigger purchases?"),
]


def run_agent(data: Path) -> None:
    """The scripted agent through a real stdio MCP session of ``atlas mcp --record``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_core.cli", "mcp", "--record", "--name", AGENT, "--embedder", EMBEDDER],
        env={**os.environ, "HF_HUB_OFFLINE": "1", "ATLAS_DATA_DIR": str(data)},
        cwd=str(ROOT),
    )

    async def script() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for tool, arguments in SCRIPT:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result)

    # Playwright's session-wide sync API keeps an event loop running in this thread,
    # where asyncio.run() refuses to start: the agent runs in a worker thread.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, script()).result(timeout=240)


def atlas_cli(data: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memory_core.cli", *args],
        cwd=ROOT, env={**os.environ, "ATLAS_DATA_DIR": str(data)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data folder after recording the agent and importing the recording (CLI)."""
    folder = tmp_path_factory.mktemp("tune-data")
    run_agent(folder)
    out = atlas_cli(
        folder, "import", "recording", "--atlas", AGENT, "--out", str(folder / "conversations")
    )
    assert "recording-helpdesk-" in out, out
    return folder


@pytest.fixture(scope="module")
def tune_server(data: Path) -> Iterator[str]:
    with streamlit_server(data) as url:
        yield url


def imported(data: Path) -> Path:
    (path,) = (data / "conversations").glob("recording-helpdesk-*.json")
    return path


def test_the_recording_imports_with_its_reads(data: Path) -> None:
    conversation = load_conversation(imported(data))
    writes = [a["content"] for tool, a in SCRIPT if tool == "memory_write"]
    assert [t.text for t in conversation.turns()] == writes
    assert [s.id for s in conversation.sessions] == ["monday", "friday"]
    assert conversation.reads is not None and len(conversation.reads) == 3
    assert conversation.key_facts == ()


def pick(page: Page, label: str, option: str) -> None:
    """Choose the option containing ``option`` in the selectbox ``label``."""
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=re.compile(re.escape(option))).first.click()
    wait_ready(page)


def test_mark_two_key_facts_tune_and_export_the_winner_screenshots(
    data: Path, tune_server: str, page: Page, tmp_path: Path
) -> None:
    path = imported(data)
    open_page(page, tune_server, "key_facts")
    expect(page.get_by_role("combobox", name="Conversation")).to_have_value(f"yours/{path.stem}")
    page.get_by_role("button", name="Open conversation").click()
    expect(page.get_by_text("Candidate key facts")).to_be_visible(timeout=LOAD_TIMEOUT)
    wait_ready(page, LOAD_TIMEOUT)
    expect(page.get_by_text(re.compile(r"returned by \d reads?"))).not_to_have_count(0)
    page.get_by_text("Recorded reads", exact=True).evaluate(
        "e => e.scrollIntoView({block: 'start'})"
    )
    page.wait_for_timeout(500)
    shoot(page, "tune_candidates")

    for n, (text, probe) in enumerate(MARKS, start=1):
        pick(page, "Candidate", text)
        page.get_by_role("textbox", name="Probe question").fill(probe)
        page.get_by_role("button", name="Accept as key fact").click()
        expect(page.get_by_text(f"Marked k{n}: {probe}")).to_be_visible(timeout=30_000)
        wait_ready(page)
    assert page.locator("[data-testid=stException]").count() == 0
    page.get_by_text("Key facts", exact=True).last.evaluate(
        "e => e.scrollIntoView({block: 'start'})"
    )
    page.wait_for_timeout(500)
    shoot(page, "tune_marked")
    page.get_by_role("button", name="Save conversation").click()
    expect(page.get_by_text(re.compile(r"^Saved 2 key facts to "))).to_be_visible(timeout=30_000)
    saved = load_conversation(path)
    assert [f.probe for f in saved.key_facts] == [probe for _, probe in MARKS]
    assert all(f.expect == "recalled" for f in saved.key_facts)

    # A broken upload: every problem by field, nothing opened or saved
    page.get_by_text("Upload a file").click()
    broken = json.loads(path.read_text())
    broken["key_facts"][0]["evidence"] = ["monday-t99"]
    broken["sessions"][1]["turns"][0]["at"] = "next Friday"
    page.locator("input[type=file]").set_input_files(
        files=[{"name": "edited.json", "mimeType": "application/json",
                "buffer": json.dumps(broken).encode()}]
    )  # fmt: skip
    wait_ready(page)
    page.get_by_role("button", name="Open upload").click()
    expect(
        page.get_by_text("edited.json: 2 problem(s); nothing was opened or saved.")
    ).to_be_visible(timeout=30_000)
    assert load_conversation(path) == saved
    shoot(page, "tune_upload_problems")

    open_page(page, tune_server, "ab_tuning")
    conversations = page.get_by_role("combobox", name="Conversations")
    clear = page.locator("[data-testid=stMultiSelect]", has=conversations).get_by_role(
        "button", name="Clear all"
    )
    clear.click()
    # one rerun at a time: typing during the Clear-all rerun once left arm B showing A's preset
    expect(clear).to_have_count(0)
    wait_ready(page)
    conversations.fill(f"yours/{path.stem}")
    conversations.press("Enter")
    wait_ready(page)
    conversations.press("Escape")
    wait_ready(page)
    expect(page.locator("[data-testid=stMultiSelect]", has=conversations)).to_contain_text(
        f"yours/{path.stem}"
    )
    presets = page.get_by_role("combobox", name="Preset", exact=True)  # not "Base preset"
    expect(presets.nth(0)).to_have_value(PRESET_A, timeout=30_000)
    expect(presets.nth(1)).to_have_value(PRESET_B, timeout=30_000)
    shoot(page, "tune_ab_setup")
    page.get_by_role("button", name="Run A/B").click()
    expect(page.get_by_text("Paired differences (B − A)")).to_be_visible(timeout=240_000)
    wait_ready(page)
    line = page.get_by_text(re.compile(r"^recall@k: ")).inner_text()
    winner = winner_of(line)
    page.get_by_text("Verdict", exact=True).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    shoot(page, "tune_ab_verdict")

    print(f"verdict: {line!r}; exporting arm {winner}")
    export = page.get_by_role("button", name=f"Export {winner} as TOML")
    export.evaluate("e => e.scrollIntoView({block: 'center'})")
    wait_ready(page)
    with page.expect_download() as download:
        export.click()
    target = tmp_path / download.value.suggested_filename
    download.value.save_as(target)
    assert target.name == f"arm-{winner.lower()}.toml"
    shown = arm_on_page(page, winner)
    got = AtlasConfig.from_toml(target)
    assert got == shown, (shown.to_dict().items() ^ got.to_dict().items(), target.read_text())
    name = PRESET_A if winner == "A" else PRESET_B
    assert got.decay_strategy == PRESETS[name].decay_strategy
    assert page.locator("[data-testid=stException]").count() == 0


def arm_on_page(page: Page, arm: str) -> AtlasConfig:
    """The configuration arm ``arm`` holds on the page: its preset plus every field as shown."""
    column = "AB".index(arm)
    name = page.get_by_role("combobox", name="Preset", exact=True).nth(column).input_value()
    values: dict[str, Any] = {}
    for field in EDITABLE_FIELDS:
        spin = page.get_by_role("spinbutton", name=field, exact=True)
        box = spin if spin.count() else page.get_by_role("combobox", name=field, exact=True)
        values[field] = parse_literal(box.nth(column).input_value())  # floats shown to 4 places
    return build_config(name, values)


def winner_of(line: str) -> str:
    """The arm the recall@k verdict favours; A when B is not better (the A arm is the baseline)."""
    found = re.search(r"B − A = ([+-]\d+\.\d+)", line)
    if found is not None:
        return "B" if float(found[1]) > 0 else "A"
    return "B" if "B is better" in line else "A"
