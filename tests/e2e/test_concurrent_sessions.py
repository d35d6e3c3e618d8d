"""Two browsers at once, and every hostile payload on every page, in headless Chromium.

One browser session plays the demo into the shared live atlas while another chats in
the playground and types a reviewer name on the conflict page: neither sees the other's
widget state, and neither shows an error. Then payloads the page tour does not cover
(very long lines, control characters, right-to-left overrides and mixed scripts, next
to script and event-handler markup) are stored and every page is opened with a flag
the payloads would set; the flag must stay unset in the page and in every iframe.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from .test_pages import PAGES, assert_not_pwned, open_page, send, wait_ready

pytestmark = pytest.mark.e2e

MORE_HOSTILE = (
    "L" * 3_000 + ' <img src=x onerror="window.__pwned=1"> end of a very long line',
    "bell\x07 escape\x1b[31m tab\there <script>window.__pwned=1</script> control chars",
    "\u202eevil.exe\u202c mixed العربية עברית 中文 русский \u200b<b onmouseover=window.__pwned=1>rtl</b>",
    'the word href and <a href="javascript:window.__pwned=1">a link</a> plus javascript:alert(1)',
)


def no_error(page: Page) -> None:
    assert page.locator("[data-testid=stException]").count() == 0, page.inner_text("body")


def test_two_sessions_at_once_keep_their_own_state(server: str, tabs: Callable[[], Page]) -> None:
    a, b = tabs(), tabs()
    open_page(a, server, "playground")
    open_page(b, server, "demo_player")
    state = b.get_by_text(re.compile(r"^(ready|paused|playing|finished) · turn"))
    expect(state).to_be_visible(timeout=60_000)
    if re.match(r"^(ready|paused)", state.inner_text()):
        b.get_by_role("button", name="Play", exact=True).click()
    expect(b.get_by_text(re.compile(r"^(playing|finished) · turn"))).to_be_visible(timeout=60_000)
    # A writes into its own session while B's demo is feeding the same atlas
    field = a.get_by_label("Session", exact=True)
    field.fill("alpha-A")
    field.press("Enter")
    wait_ready(a)
    send(a, "session A remembers the blue umbrella")
    no_error(a)
    no_error(b)
    # B's playground has none of A's chat, and its own session field
    open_page(b, server, "playground")
    assert b.locator("[data-testid=stChatMessage]", has_text="blue umbrella").count() == 0
    expect(b.get_by_label("Session", exact=True)).to_have_value("playground")
    # A, still on its page, kept its own session and conversation
    expect(a.get_by_label("Session", exact=True)).to_have_value("alpha-A")
    expect(a.locator("[data-testid=stChatMessage]", has_text="blue umbrella").first).to_be_visible()
    # A's reviewer name on the conflict page is A's alone
    open_page(a, server, "conflict_review")
    reviewer = a.get_by_label("Reviewer", exact=True)  # in the sidebar, queue or not
    reviewer.fill("ana-from-A")
    reviewer.press("Enter")
    wait_ready(a)
    open_page(b, server, "conflict_review")
    expect(b.get_by_label("Reviewer", exact=True)).to_have_value("")
    # the same name on the other review page (a link keeps the browser session)
    a.get_by_test_id("stSidebarNav").get_by_role("link", name="Knowledge audit").click()
    expect(a.locator("h1").first).to_contain_text("Knowledge audit", timeout=60_000)
    expect(a.get_by_label("Reviewer", exact=True)).to_have_value("ana-from-A")
    no_error(a)
    no_error(b)
    assert_not_pwned(a)
    assert_not_pwned(b)


def test_more_hostile_payloads_never_run_on_any_page(server: str, page: Page) -> None:
    open_page(page, server, "playground")
    for payload in MORE_HOSTILE:
        send(page, payload)
    expect(
        page.locator(
            "[data-testid=stChatMessage]", has_text="<script>window.__pwned=1</script>"
        ).first
    ).to_be_visible()
    assert_not_pwned(page)
    for slug in PAGES:
        open_page(page, server, slug)
        page.wait_for_timeout(700)  # let iframes (graph, html panels) load and run
        no_error(page)
        assert_not_pwned(page)
    # the markup is shown as text in the playground, never as elements
    open_page(page, server, "playground")
    assert page.locator("b[onmouseover]").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0
