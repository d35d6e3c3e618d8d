"""The task context graph in a real browser: a short task talk in the playground, then
the live graph's entity view shows the constraint in force and the one it replaced.

One page session on its own server (MiniLM and the English parser load on the first
turn); the screenshot goes to ``artifacts/`` and, under ``make screenshots``, to
``docs/screenshots/live_graph_entities.png``.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Frame, Page, expect

from .test_pages import graph_frame, open_page, send, shoot, wait_ready

pytestmark = pytest.mark.e2e

TALK = (
    "I need to book a hotel in Lisbon for my trip, my budget is 150 EUR per night.",
    "Actually, make my hotel budget 180 EUR per night.",
)


def test_entity_view_shows_the_constraint_in_force_screenshots(server: str, page: Page) -> None:
    open_page(page, server, "playground")
    for line in TALK:
        send(page, line)
    open_page(page, server, "live_graph")
    toggle = page.get_by_test_id("stButtonGroup").filter(has_text="memories")
    expect(toggle).to_be_visible(timeout=30_000)
    toggle.locator("button", has_text="entities").click()
    wait_ready(page)
    expect(page.get_by_text("Constraints in force", exact=True)).to_be_visible(timeout=30_000)
    table = page.get_by_test_id("stDataFrame").last
    expect(table).to_contain_text("180 EUR per night", timeout=30_000)
    expect(table).to_contain_text("150 EUR per night")  # the one it replaced
    frame = graph_frame(page)
    assert frame is not None, "no entity graph drawn"
    drawn = frame.evaluate("() => nodes.get().map(n => [n.title, n.shapeProperties])")
    replaced = [d for t, d in drawn if re.search(r"150 EUR per night", t) and "deprecated" in t]
    assert replaced and replaced[0]["borderDashes"], drawn  # the replaced one is dashed
    in_force = [d for t, d in drawn if "180 EUR per night" in t and "state: active" in t]
    assert in_force and not in_force[0]["borderDashes"]
    assert page.locator("[data-testid=stException]").count() == 0
    click_node(page, frame, "deprecated")  # a click focuses the replaced value
    picker = page.get_by_role("combobox", name="Focus on a node")
    expect(picker).to_have_value(re.compile("150 EUR per night"), timeout=30_000)
    wait_ready(page)
    page.locator("iframe[title='Task context graph']").evaluate(
        "f => f.scrollIntoView({block: 'start'})"
    )  # the graph and the table of constraints in one screen
    shoot(page, "live_graph_entities")


def click_node(page: Page, frame: Frame, title_part: str) -> None:
    """Click the drawn node whose hover text contains ``title_part``."""
    spot = frame.evaluate(
        """part => {
            const node = nodes.get().find(n => String(n.title).includes(part));
            const p = network.canvasToDOM(network.getPositions([node.id])[node.id]);
            const r = document.getElementById('mynetwork').getBoundingClientRect();
            return {x: p.x + r.left, y: p.y + r.top};
        }""",
        title_part,
    )
    drawing = page.locator("iframe[title='Task context graph']")
    drawing.scroll_into_view_if_needed()
    box = drawing.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + spot["x"], box["y"] + spot["y"])
