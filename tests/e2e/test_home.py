"""The home page and the sidebar links: every page reachable by its own URL and by its link."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_pages import LOAD_TIMEOUT, PAGES, open_page, shoot, wait_ready

pytestmark = pytest.mark.e2e


def test_every_sidebar_link_and_deep_link_opens_its_page(server: str, page: Page) -> None:
    open_page(page, server, "home")
    for slug, title in PAGES.items():
        link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=NAV_NAMES[slug])
        link.click()
        expect(page.locator("h1").first).to_contain_text(title, timeout=LOAD_TIMEOUT)
        wait_ready(page, LOAD_TIMEOUT)
        assert page.get_by_text("Page not found").count() == 0, slug
    page.goto(f"{server}/demo_player")
    expect(page.locator("h1").first).to_contain_text("Demo player", timeout=LOAD_TIMEOUT)
    assert page.get_by_text("Page not found").count() == 0


NAV_NAMES = {
    "home": "Home",
    "demo_player": "Demo player",
    "live_graph": "Live graph",
    "playground": "Playground",
    "weights": "Weights",
    "eviction_log": "Eviction log",
    "key_facts": "Mark key facts",
    "ab_tuning": "A/B tuning",
    "conflict_review": "Conflict review",
    "knowledge_audit": "Knowledge audit",
}


def test_home_says_what_this_is_and_starts_the_demo_in_one_click(server: str, page: Page) -> None:
    open_page(page, server, "home")
    expect(page.get_by_text(re.compile("memory engine for AI agents"))).to_be_visible()
    shoot(page, "home")
    page.get_by_role("button", name="Play the demo").click()
    expect(page.locator("h1").first).to_contain_text("Demo player", timeout=LOAD_TIMEOUT)
    expect(page.get_by_text(re.compile(r"^(playing|finished) · turn"))).to_be_visible(
        timeout=30_000
    )
