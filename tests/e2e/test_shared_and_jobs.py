"""Shared state, long jobs and pages at rest, in headless Chromium (issue #29 points 3-7).

One dashboard server (hashing embedder, so the jobs take seconds) whose data folder
holds a conversation with a probe over the arms' text limit, small enough to be among
the A/B page's default conversations:

- every page at rest sends no full-page rerun; only the three pages showing the shared
  live atlas keep their cheap watch (one fragment rerun per 10 s at rest); A/B none;
- two browser contexts at once: one plays the demo, the other's Demo page follows it
  ("the demo plays in another session"), and a Playground message from the first shows
  up on the second's Live graph without a reload;
- a reload during each long job — A/B run, sweep, conflict scan — re-attaches to it
  (a reload is a new browser session: "Started by another browser session") and shows
  its result; the A/B run names the failing
  conversation and its fact and keeps the other conversations' results.

Synchronisation waits on page state only; the rest windows are measurements.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from benchmarks.idle_pages_bench import APP_READY, PAGES, RerunCounter, open_at_rest

from .conftest import ROOT, open_expander, streamlit_server

pytestmark = pytest.mark.e2e

SHARED_PAGES = {"demo_player", "live_graph", "playground"}
REST_SECONDS = 2.5
WAIT = 90_000


def broken_conversation(folder: Path) -> str:
    """A short conversation whose one probe is over max_content_chars (8,000)."""
    data = json.loads((ROOT / "sample_sessions" / "sensitive-eta-application.json").read_text())
    first = data["sessions"][0]
    first["turns"] = first["turns"][:3]
    kept = {t["id"] for t in first["turns"]}
    facts = [f for f in data["key_facts"] if set(f["evidence"]) <= kept][:2]
    facts[0]["probe"] = "why " * 2_001  # 8,004 characters
    conversation = {**data, "id": "huge-probe", "sessions": [first], "key_facts": facts}
    # third smallest: among the A/B page's three default conversations, not the sweep's one
    sizes = sorted(p.stat().st_size for p in (ROOT / "sample_sessions").glob("*.json"))
    target = (sizes[1] + sizes[2]) // 2
    conversation["description"] = ""
    conversation["description"] = "x" * (target - len(json.dumps(conversation)))
    path = folder / "conversations" / "huge-probe.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(conversation))
    return str(facts[0]["id"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    data = tmp_path_factory.mktemp("atlas-shared")
    fact = broken_conversation(data)
    with streamlit_server(data, ATLAS_DASHBOARD_EMBEDDER="hashing") as url:
        yield url, fact


def wait_ready(page: Page) -> None:
    page.wait_for_selector(APP_READY, timeout=WAIT)


def test_pages_at_rest_do_not_rerun(served: tuple[str, str], tabs: Callable[[], Page]) -> None:
    url, _ = served
    page = tabs()
    counter = RerunCounter(page)
    counts = {}
    for slug in PAGES:
        open_at_rest(page, url, slug)
        page.wait_for_timeout(300)  # the first run's own follow-up settles
        counter.reset()
        page.wait_for_timeout(REST_SECONDS * 1000)  # measured window, not a sync wait
        counts[slug] = counter.reset()
    assert all(full == 0 for full, _ in counts.values()), counts
    at_rest = {s: f for s, (_, f) in counts.items() if s not in SHARED_PAGES}
    assert set(at_rest.values()) == {0}, counts  # A/B tuning included
    assert all(counts[s][1] <= 1 for s in SHARED_PAGES), counts  # one watch per 10 s


def test_a_second_browser_follows_the_demo_and_the_playground(
    served: tuple[str, str], tabs: Callable[[], Page]
) -> None:
    url, _ = served
    a, b = tabs(), tabs()
    open_at_rest(b, url, "demo_player")  # B looks at rest, before A does anything
    expect(b.get_by_text(re.compile(r"^(ready|paused|finished) · turn"))).to_be_visible(
        timeout=WAIT
    )
    open_at_rest(a, url, "demo_player")
    a.get_by_role("button", name="Play", exact=True).click()
    expect(b.get_by_text(re.compile(r"^the demo plays in another session"))).to_be_visible(
        timeout=WAIT
    )
    wait_ready(a)
    a.get_by_role("button", name="Pause", exact=True).click()
    expect(b.get_by_text(re.compile(r"^(paused|finished) · turn"))).to_be_visible(timeout=WAIT)
    b.screenshot(path=str(ROOT / "artifacts" / "demo_followed_elsewhere.png"))
    open_at_rest(b, url, "live_graph")
    open_at_rest(a, url, "playground")
    b.screenshot(path=str(ROOT / "artifacts" / "live_graph_shared.png"))
    a.get_by_role("textbox", name=re.compile("Tell the memory")).fill("the blue umbrella")
    a.keyboard.press("Enter")
    expect(
        b.get_by_text("another browser session wrote a message in session playground")
    ).to_be_visible(timeout=WAIT)
    b.screenshot(path=str(ROOT / "artifacts" / "live_graph_followed.png"))


def test_reload_reattaches_to_each_long_job(
    served: tuple[str, str], tabs: Callable[[], Page]
) -> None:
    url, fact = served
    page = tabs()
    # A/B run over the three smallest conversations, one of them broken
    open_at_rest(page, url, "ab_tuning")
    page.get_by_role("button", name="Run A/B").click()
    expect(page.get_by_text("Started by you", exact=False).first).to_be_visible(timeout=WAIT)
    page.reload()  # a new browser session: it re-attaches to the same job
    page.wait_for_selector("h1", timeout=WAIT)
    expect(page.get_by_text("Started by another browser session").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_text("Paired differences (B − A)")).to_be_visible(timeout=WAIT)
    failure = page.get_by_text("Left out: conversation huge-probe:", exact=False)
    expect(failure).to_contain_text(f"key fact {fact}")
    wait_ready(page)
    failure.scroll_into_view_if_needed()
    page.screenshot(path=str(ROOT / "artifacts" / "ab_tuning_job.png"))
    expect(page.get_by_role("button", name="Run A/B")).to_be_enabled()
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_disabled()
    # a 2-trial sweep
    page.get_by_role("tab", name="Optuna sweep").click()
    page.get_by_label("Trials").fill("2")
    page.get_by_label("Trials").press("Enter")
    wait_ready(page)
    page.get_by_role("button", name="Run sweep").click()
    expect(page.get_by_text(re.compile(r"of 2 trials"))).to_be_visible(timeout=WAIT)
    page.reload()
    page.wait_for_selector("h1", timeout=WAIT)
    # drawn in the sweep tab, whichever tab the finished job's rerun leaves open
    expect(page.get_by_text(re.compile(r"done · 2 of 2 trials"))).to_be_attached(timeout=WAIT)
    wait_ready(page)
    page.get_by_role("tab", name="Optuna sweep").click()
    expect(page.get_by_text(re.compile(r"done · 2 of 2 trials"))).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("button", name="Export trial as TOML")).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("button", name="Run sweep")).to_be_enabled()
    # a conflict scan
    open_at_rest(page, url, "conflict_review")
    open_expander(page, "Write a memory through the conflict guard")
    page.get_by_role("button", name="Scan the atlas for contradictions").click()
    expect(page.get_by_text("Started by you", exact=False)).to_be_visible(timeout=WAIT)
    page.reload()
    page.wait_for_selector("h1", timeout=WAIT)
    wait_ready(page)
    open_expander(page, "Write a memory through the conflict guard")
    expect(page.get_by_text(re.compile(r"The scan queued \d+ contradicting pairs"))).to_be_visible(
        timeout=WAIT
    )
    expect(page.get_by_text("Started by another browser session; done.")).to_be_visible()
    page.get_by_test_id("stExpander").first.screenshot(
        path=str(ROOT / "artifacts" / "conflict_scan_job.png")
    )


def test_an_opened_expander_is_at_rest_and_takes_a_click(
    served: tuple[str, str], tabs: Callable[[], Page]
) -> None:
    """``open_expander`` returns with the expander fully open and still, so a click inside
    lands on its target: the scan click of the reload test, made while the expander still
    grew, was lost once (no message to the server, no scan)."""
    url, _ = served
    page = tabs()
    open_at_rest(page, url, "conflict_review")
    expander = open_expander(page, "Write a memory through the conflict guard")
    clipped = expander.locator("details").evaluate(
        "d => [d.getAnimations().length, d.scrollHeight - d.clientHeight, d.scrollTop]"
    )
    assert clipped == [0, 0, 0]  # nothing animates, nothing is hidden or scrolled inside
    expander.get_by_role("button", name="Scan the atlas for contradictions").click()
    expect(expander.get_by_text("Started by you", exact=False)).to_be_visible(timeout=WAIT)
