"""A change the task context graph holds back reaches the Conflict review page in a real
browser, with a link to its node; accepting it applies the change in the graph.

Two playground turns name the hotel limit by two slot names the graph is unsure are one
(MiniLM puts "room budget" 0.67 from "budget"): the second value is not applied but
queued. The reviewer sees the item with the node in force, accepts it, and the live
graph's entity view then shows the new value in force. Screenshots go to ``artifacts/``
(and to ``docs/screenshots/`` under ``make screenshots``).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .test_pages import open_page, send, shoot, wait_ready

pytestmark = pytest.mark.e2e

TALK = (
    "Book a hotel in Lisbon, the nightly budget is 150 EUR.",
    "The room budget is 180 EUR per night.",
)


def test_a_held_back_context_change_is_reviewed_and_applied_screenshots(
    server: str, page: Page
) -> None:
    page.set_default_navigation_timeout(120_000)  # MiniLM and the parser load on a busy box
    open_page(page, server, "playground")
    guard = page.get_by_role("switch", name="Conflict guard")
    if guard.is_checked():  # the graph's own review, not the guard's pair of memories
        page.get_by_test_id("stCheckbox").filter(has_text="Conflict guard").locator("label").click()
        wait_ready(page)
        expect(guard).not_to_be_checked()
    for line in TALK:
        send(page, line)
    open_page(page, server, "conflict_review")
    main = page.get_by_test_id("stMainBlockContainer")
    search = main.get_by_label("Text contains", exact=True)
    search.fill("room budget")
    search.press("Enter")
    wait_ready(page)
    picker = main.get_by_role("combobox", name="Item")
    detector = page.get_by_text(re.compile("^Detector: task context graph"))
    for _ in range(4):  # the guard may have queued the same pair of memories too
        if detector.count():
            break
        picker.click()
        page.get_by_role("option").nth(1).click()
        wait_ready(page)
    expect(detector).to_be_visible(timeout=30_000)
    expect(detector).to_contain_text("'room budget' = '180 EUR per night'")
    node = re.search(r"node (C-[0-9a-f]+)", detector.inner_text())
    assert node is not None
    link = page.get_by_role("link", name=re.compile(f"Open constraint {node[1]} in the live graph"))
    expect(link).to_be_visible(timeout=30_000)
    assert f"focus={node[1]}" in (link.get_attribute("href") or "")
    main.get_by_text("Old", exact=True).first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    shoot(page, "conflict_review_context")
    reviewer = page.get_by_label("Reviewer", exact=True).first
    reviewer.fill("ana")
    reviewer.press("Enter")
    wait_ready(page)
    page.get_by_role("button", name="Accept new").click()
    wait_ready(page)
    expect(page.get_by_text(re.compile("accept_new recorded as audit entry"))).to_be_visible(
        timeout=30_000
    )
    open_page(page, server, "live_graph")
    toggle = page.get_by_test_id("stButtonGroup").filter(has_text="memories")
    expect(toggle).to_be_visible(timeout=30_000)
    toggle.locator("button", has_text="entities").click()
    wait_ready(page)
    table = page.get_by_test_id("stDataFrame").last
    expect(table).to_contain_text("180 EUR per night", timeout=30_000)  # in force now
    expect(table).to_contain_text("150 EUR")  # the one it replaced
    assert page.locator("[data-testid=stException]").count() == 0
