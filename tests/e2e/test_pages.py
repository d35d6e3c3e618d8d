"""Every dashboard page in headless Chromium: renders, plays, and never runs memory text.

Tests share one server (and so one live atlas) and run in file order: the demo fills
the atlas, the page tour screenshots it, the hostile-text test adds payloads on top.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Frame, Page, expect

from benchmarks.idle_pages_bench import APP_READY

from .conftest import open_expander

pytestmark = pytest.mark.e2e

PAGES = {
    "home": "Elastic Atlas",
    "demo_player": "Demo player",
    "live_graph": "Live graph",
    "playground": "Playground",
    "weights": "Weight distribution",
    "eviction_log": "Eviction log",
    "key_facts": "Mark key facts",
    "ab_tuning": "A/B tuning",
    "conflict_review": "Conflict review",
    "knowledge_audit": "Knowledge audit",
}
HOSTILE = (
    "<script>window.__pwned=1</script> remember the launch code",
    '<img src=x onerror="window.__pwned=1"> the hotel photo',
    '[click me](javascript:window.__pwned=1) and <a href="javascript:window.__pwned=1">x</a>',
    'a note with href="#" in it <svg onload="window.__pwned=1"></svg>',
)
LOAD_TIMEOUT = 120_000  # first page load includes loading MiniLM
ROOT = Path(__file__).resolve().parents[2]


def screenshot_dirs() -> list[Path]:
    """``artifacts/`` always, plus ``$ATLAS_SCREENSHOT_DIR`` (``make screenshots``)."""
    dirs = [ROOT / "artifacts"]
    extra = os.environ.get("ATLAS_SCREENSHOT_DIR")
    if extra:
        dirs.append(ROOT / extra)
    for folder in dirs:
        folder.mkdir(parents=True, exist_ok=True)
    return dirs


def wait_ready(page: Page, timeout: float = 60_000) -> None:
    page.wait_for_selector("h1", timeout=timeout)
    page.wait_for_selector(APP_READY, timeout=timeout)


def open_page(page: Page, base: str, slug: str) -> None:
    page.goto(f"{base}/{'' if slug == 'home' else slug}")
    page.wait_for_selector("h1", timeout=LOAD_TIMEOUT)
    expect(page.locator("h1").first).to_contain_text(PAGES[slug], timeout=LOAD_TIMEOUT)
    wait_ready(page, LOAD_TIMEOUT)
    assert page.locator("[data-testid=stException]").count() == 0, page.inner_text("body")


def metric(page: Page, label: str) -> int:
    box = page.locator("[data-testid=stMetric]", has_text=label).first
    return int(box.locator("[data-testid=stMetricValue]").inner_text().strip())


def graph_frame(page: Page, wait_ms: int = 30_000) -> Frame | None:
    """The pyvis iframe; graphs are drawn by a fragment, so it may arrive after the page."""
    deadline = time.monotonic() + wait_ms / 1000
    while True:
        for frame in page.frames:
            if frame is not page.main_frame and frame.locator("#mynetwork").count():
                return frame
        if time.monotonic() > deadline:
            return None
        page.wait_for_timeout(250)


def assert_not_pwned(page: Page) -> None:
    for frame in page.frames:
        assert frame.evaluate("() => window.__pwned") is None, frame.url


def shoot(page: Page, name: str) -> None:
    frame = graph_frame(page, wait_ms=0)
    if frame is not None:  # let vis-network finish its layout
        frame.wait_for_selector("canvas", timeout=20_000)
        page.wait_for_timeout(1_500)
    for folder in screenshot_dirs():
        path = folder / f"{name}.png"
        page.screenshot(path=str(path))
        with Image.open(path) as shot:  # 256 colours: a third of the size, same look
            shot.convert("RGB").quantize(256).save(path, optimize=True)


def test_play_makes_the_memory_grow(server: str, page: Page) -> None:
    open_page(page, server, "demo_player")
    page.get_by_role("button", name="Reset", exact=True).click()
    wait_ready(page)
    expect(page.get_by_text("ready · turn 0 of")).to_be_visible()
    assert metric(page, "Memories") == 0
    page.get_by_role("button", name="Play", exact=True).click()
    seen = [0]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and (max(seen) < 8 or rises(seen) < 3):
        page.wait_for_timeout(1_000)
        seen.append(metric(page, "Memories"))
    assert max(seen) >= 8 and rises(seen) >= 3, f"node counter over time: {seen}"
    assert metric(page, "Links") >= 1
    assert page.locator("[data-testid=stException]").count() == 0
    # Playback goes on in the server while this tab is gone; the next test waits for it.


def rises(values: list[int]) -> int:
    return sum(b > a for a, b in itertools.pairwise(values))


def test_every_page_renders_screenshots(server: str, page: Page) -> None:
    offsite: list[str] = []  # the dashboard works offline: nothing may leave the server
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith((server, "data:", "blob:", "about:"))
            else offsite.append(request.url)
        ),
    )
    open_page(page, server, "demo_player")
    # a demo started by the previous test's tab plays "in another session" for this one
    progress = page.get_by_text(
        re.compile(r"^(\w+|the demo plays in another session \(.+\)) · turn \d+ of \d+$")
    ).first
    expect(progress).to_be_visible(timeout=30_000)
    if progress.inner_text().startswith(("ready", "paused")):
        page.get_by_role("button", name="Play", exact=True).click()  # when run on its own (-k)
    expect(page.get_by_text(re.compile(r"^finished · turn"))).to_be_visible(timeout=420_000)
    assert metric(page, "Evicted") > 0, "the demo preset shows forgetting"
    for slug in PAGES:
        open_page(page, server, slug)
        if slug == "playground":
            send(page, "I always take the train, never short flights")
            send(page, "how should I travel to Munich?")
        if slug in ("demo_player", "live_graph", "playground"):
            assert graph_frame(page) is not None, f"{slug}: no graph drawn"
        if slug == "eviction_log":
            expect(page.get_by_text(re.compile(r"\d+ matching evictions"))).to_be_visible()
            if page.get_by_text(re.compile(r"^0 matching evictions")).count():
                # Nothing decayed out: purge the demo's sessions so the log has real rows.
                open_page(page, server, "demo_player")
                page.get_by_role("button", name="Reset", exact=True).click()
                wait_ready(page)
                open_page(page, server, slug)
                expect(
                    page.get_by_text(re.compile(r"^[1-9]\d* matching evictions"))
                ).to_be_visible()
        if slug == "conflict_review":
            queue_a_conflict(page)
            open_page(page, server, slug)  # fresh render: the write form folded away
            review_accept_and_undo(page)
        shoot(page, slug)
    assert not offsite, f"requests left the dashboard's server: {sorted(set(offsite))}"


def test_clicking_a_node_inspects_it(server: str, page: Page) -> None:
    open_page(page, server, "live_graph")
    frame = graph_frame(page)
    assert frame is not None
    frame.wait_for_selector("canvas", timeout=20_000)
    page.wait_for_timeout(1_000)
    target = frame.evaluate(
        """() => {
            const node = nodes.get()[nodes.length - 1];
            const p = network.canvasToDOM(network.getPositions([node.id])[node.id]);
            const r = document.getElementById('mynetwork').getBoundingClientRect();
            return {id: node.id, x: p.x + r.left, y: p.y + r.top, title: node.title};
        }"""
    )
    box = page.locator("iframe[title='Memory graph']").first.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + target["x"], box["y"] + target["y"])
    first_line = target["title"].split("\n")[0][:20]
    picker = page.get_by_role("combobox", name="Inspect a memory")
    expect(picker).to_have_value(re.compile(re.escape(first_line[:15])), timeout=30_000)
    page.get_by_text("Node inspector").evaluate("e => e.scrollIntoView({block: 'start'})")
    shoot(page, "live_graph_inspector")


def queue_a_conflict(page: Page) -> None:
    """Two equally unsure statements of one fee: too close to call, so queued for review.

    A topic the demo conversation never mentions, so its memories cannot settle it."""
    open_expander(page, "Write a memory through the conflict guard")
    form = page.get_by_test_id("stForm")
    for text in (
        "The office parking fee is 50 euros a month",
        "The office parking fee is 65 euros a month",
    ):
        form.get_by_label("Memory").fill(text)
        confidence = form.get_by_role("slider")
        confidence.focus()
        confidence.press("End")
        for _ in range(10):  # 1.00 -> 0.50 in steps of 0.05
            confidence.press("ArrowLeft")
        form.get_by_role("button", name="Write").click()
        expect(page.get_by_text(re.compile("^stored .* with confidence 0.50$"))).to_be_visible(
            timeout=60_000
        )
        wait_ready(page)
    expect(page.get_by_text(re.compile(r"^review: .*50 euros a month"))).to_be_visible()
    wait_ready(page)  # messages render early in a run, the counts later: read them once it ended
    assert metric(page, "Open") >= 1


def review_accept_and_undo(page: Page) -> None:
    """Accept the queued item as a named reviewer: its audit entry stays on screen, Undo works."""
    reviewer = page.get_by_label("Reviewer", exact=True)
    reviewer.fill("ana")
    reviewer.press("Enter")
    wait_ready(page)
    page.get_by_role("button", name="Accept new").click()
    wait_ready(page)
    expect(page.get_by_text("Your last action")).to_be_visible(timeout=30_000)
    expect(page.get_by_text(re.compile("accept_new recorded as audit entry"))).to_be_visible()
    page.get_by_text("Your last action").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    shoot(page, "conflict_review_accepted")
    page.locator("[data-testid=stButton] button", has_text=re.compile("^Undo$")).first.click()
    wait_ready(page)
    expect(page.get_by_text(re.compile(r"#\d+ undone"))).to_be_visible(timeout=30_000)
    wait_ready(page)  # the flash shows while the rerun still runs; the counts come after it
    assert metric(page, "Open") >= 1
    page.get_by_text("Old", exact=True).first.evaluate("e => e.scrollIntoView({block: 'center'})")


def send(page: Page, text: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")
    expect(page.locator("[data-testid=stChatMessage]", has_text=text[:20]).first).to_be_visible(
        timeout=60_000
    )
    wait_ready(page)


def test_hostile_text_renders_as_text_everywhere(server: str, page: Page) -> None:
    page.add_init_script("window.__pwned = undefined;")
    open_page(page, server, "playground")
    for payload in HOSTILE:
        send(page, payload)
    chat = page.locator("[data-testid=stChatMessage]")
    expect(chat.filter(has_text="<script>window.__pwned=1</script>").first).to_be_visible()
    assert_not_pwned(page)

    for slug in PAGES:
        open_page(page, server, slug)
        page.wait_for_timeout(500)
        assert_not_pwned(page)

    # The graph tooltip of the <img onerror> memory shows its markup as text.
    open_page(page, server, "live_graph")
    frame = graph_frame(page)
    assert frame is not None
    frame.wait_for_selector("canvas", timeout=20_000)
    page.wait_for_timeout(2_000)
    target = frame.evaluate(
        """() => {
            const node = nodes.get().find(n => n.title.includes('onerror='));
            if (!node) return null;
            // alone in a corner, so the hover cannot land on a neighbour drawn over it
            const all = Object.values(network.getPositions());
            const x = Math.max(...all.map(p => p.x)) + 150, y = Math.max(...all.map(p => p.y)) + 150;
            network.moveNode(node.id, x, y);
            network.fit();
            const p = network.canvasToDOM(network.getPositions([node.id])[node.id]);
            return {x: p.x, y: p.y};
        }"""
    )
    if target is None:
        pytest.skip("hostile memory not among the drawn nodes")
    page.wait_for_timeout(1_000)
    target = frame.evaluate(
        """() => {
            const node = nodes.get().find(n => n.title.includes('onerror='));
            const p = network.canvasToDOM(network.getPositions([node.id])[node.id]);
            const r = document.getElementById('mynetwork').getBoundingClientRect();
            return {x: p.x + r.left, y: p.y + r.top};
        }"""
    )
    graph = page.locator("iframe[title='Memory graph']").first
    # the View toggle above the graph pushed its lower edge below the fold: a mouse
    # outside the viewport hovers nothing
    graph.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    box = graph.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + target["x"], box["y"] + target["y"])
    tooltip = frame.locator("div.vis-tooltip")
    expect(tooltip).to_be_visible(timeout=10_000)
    assert '<img src=x onerror="window.__pwned=1">' in tooltip.inner_text()
    assert tooltip.locator("img").count() == 0
    assert_not_pwned(page)


def visible(page: Page, selector: str):  # type: ignore[no-untyped-def]
    return page.locator(f"{selector}:visible").first


def scroll_to_chart(page: Page, title: str) -> None:
    chart = page.locator("[data-testid=stPlotlyChart]:visible", has_text=title).first
    chart.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)


def test_tuning_page_runs_sweeps_saves_and_reopens_screenshots(server: str, page: Page) -> None:
    open_page(page, server, "ab_tuning")
    page.get_by_role("button", name="Run A/B").click(timeout=60_000)
    expect(page.get_by_text("Paired differences (B − A)")).to_be_visible(timeout=240_000)
    expect(page.get_by_text(re.compile(r"^recall@k: "))).to_be_visible()  # the verdict
    page.get_by_text("Verdict", exact=True).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    shoot(page, "ab_tuning_verdict")
    trajectories = page.get_by_text(re.compile("key-fact weight over simulated time")).first
    expect(trajectories).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Why facts were missed")).to_be_visible()
    scroll_to_chart(page, "B − A with confidence interval")
    shoot(page, "ab_tuning")  # after the tour's shot of the empty page: with results
    scroll_to_chart(page, "key-fact weight over simulated time")
    shoot(page, "ab_tuning_trajectories")
    page.get_by_text("Why facts were missed").evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    shoot(page, "ab_tuning_explanations")

    visible(page, "input[aria-label='Run name']").fill("e2e seed vs tuned")
    visible(page, "input[aria-label='Run name']").press("Enter")
    page.get_by_role("button", name="Save run").click()
    expect(page.get_by_text("Saved as 'e2e seed vs tuned'")).to_be_visible(timeout=30_000)

    page.get_by_role("tab", name="Optuna sweep").click()
    trials = visible(page, "input[aria-label='Trials']")
    trials.fill("3")
    trials.press("Enter")
    wait_ready(page)
    page.get_by_role("button", name="Run sweep").click()
    front = page.get_by_text(re.compile(r"3 trials, \d+ on the front")).first
    expect(front).to_be_visible(timeout=120_000)
    # the live front drawn while trials run has the same title: wait for the finished view
    expect(page.get_by_role("button", name="Use as arm A")).to_be_visible(timeout=60_000)
    assert page.locator("[data-testid=stException]").count() == 0
    scroll_to_chart(page, "on the front")
    shoot(page, "ab_tuning_sweep")

    # A fresh session re-attaches to the server's finished A/B job (runs are jobs in the
    # job registry), so its result is on screen again before any saved run is opened.
    page.reload()
    wait_ready(page, LOAD_TIMEOUT)
    expect(page.get_by_text("Paired differences (B − A)")).to_be_visible(timeout=30_000)
    open_expander(page, "Saved runs")
    picker = page.get_by_role("combobox", name="Saved runs")
    expect(picker).to_have_value(re.compile("^e2e seed vs tuned · ab-tuning"))
    page.locator("[data-testid=stButton] button", has_text="Open").click()
    expect(page.get_by_text(re.compile(r"^Opened e2e seed vs tuned · ab-tuning"))).to_be_visible(
        timeout=30_000
    )
    expect(page.get_by_text("Paired differences (B − A)")).to_be_visible(timeout=30_000)
    expect(page.get_by_text(re.compile("key-fact weight over simulated time")).first).to_be_visible(
        timeout=30_000
    )
    assert page.locator("[data-testid=stException]").count() == 0
