"""Bad and hostile input on every upload and typed field, in a real Chromium (issue #29).

One server (hashing embedder: these tests are about the boundary, not recall) and one
page session: each upload gets the whole list of bad files in turn, so the browser and
the server start once. Checked every time: a clear error naming the file, no traceback,
no echo of a huge field, no password, and the previous result gone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import ROOT, open_expander, streamlit_server
from .test_pages import open_page, shoot, wait_ready

pytestmark = pytest.mark.e2e

SECRET_PG = "postgresql+psycopg://u:secret@127.0.0.1:1/db"  # closed local port
HUGE = 1_048_576
NOISE = "Q" * 40  # a run of the huge field's characters must never reach the page

BAD_JSON: list[tuple[str, bytes, str]] = [
    ("deep.json", b"[" * 10_000 + b"]" * 10_000, "nests 10,000 levels deep; at most 64"),
    ("huge.json", json.dumps([{"content": "Q" * HUGE}]).encode(), "1,048,576 characters"),
    ("binary.json", bytes(range(256)) * 8, "is binary"),
    ("schema.json", b'{"rows": [1, 2]}', 'must be a list of items or {"items": [...]}'),
    ("empty.json", b"", "is empty"),
    ("utf16.json", '[{"key": "x"}]'.encode("utf-16"), "UTF-16"),
]
BAD_CSV: list[tuple[str, bytes, str]] = [
    ("unterminated.csv", b'key,content\nk1,"never closed\nk2,x\n', "line 2: unterminated quoted"),
    ("empty.csv", b"", "is empty: expected a header row with columns"),
    ("latin1.csv", "key,content\nk,caf\u00e9\n".encode("latin-1"), "is not UTF-8"),
    ("columns.csv", b"colour,shape\nred,round\n", "columns: unknown 'colour', 'shape'"),
]
BAD_CONVERSATIONS = [
    (name, data, "looks like none of atlas-session/1" if name == "schema.json" else says)
    for name, data, says in BAD_JSON
]
GOOD_CSV = (
    b"key,content,source_kind,source_name,version,effective_from\n"
    b"policy.e2e,Receipts are kept for ten years.,second_party_document,Handbook,1,2026-01-01\n"
)


@pytest.fixture(scope="module")
def bad_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("atlas-bad-input")
    with streamlit_server(
        data, ATLAS_DASHBOARD_EMBEDDER="hashing", ATLAS_STUDY_STORAGE_URLS=SECRET_PG
    ) as url:
        yield url, data


def upload(page: Page, name: str, data: bytes, where: str = "[data-testid=stMain]") -> None:
    """Hand ``data`` to the uploader under ``where`` and wait until the server has it (the
    file's name listed under the uploader, the rerun it caused finished)."""
    mime = "text/csv" if name.endswith(".csv") else "application/octet-stream"
    page.locator(f"{where} input[type=file]").set_input_files(
        files=[{"name": name, "mimeType": mime, "buffer": data}]
    )
    listed = page.locator(f"{where} [data-testid=stFileChipName]", has_text=name)
    expect(listed.first).to_be_visible(timeout=30_000)
    # the chip shows while the bytes still travel; the rerun comes once they arrived
    expect(page.locator(f"{where} [data-testid=stFileChipIconSpinner]")).to_have_count(0)
    page.wait_for_timeout(500)
    wait_ready(page)


def assert_clean(page: Page) -> None:
    body = page.inner_text("body")
    assert page.locator("[data-testid=stException]").count() == 0, body[:2000]
    assert NOISE not in body and "secret" not in body and "Traceback" not in body
    assert "/tmp/" not in body


def error_text(page: Page, contains: str) -> str:
    alert = page.locator("[data-testid=stAlertContentError]", has_text=contains).first
    try:
        expect(alert).to_be_visible(timeout=30_000)
    except AssertionError:
        main = page.locator("[data-testid=stMain]").inner_text()
        raise AssertionError(f"no error with {contains!r}; the page says:\n{main[:3000]}") from None
    return alert.inner_text()


def test_every_bad_file_on_every_upload(bad_server: tuple[str, Path], page: Page) -> None:
    base, _ = bad_server
    # Knowledge audit → Import: a good file first, so there is a result to clear
    open_page(page, base, "knowledge_audit")
    reviewer = page.get_by_label("Reviewer", exact=True)
    reviewer.fill("ana")
    reviewer.press("Enter")
    wait_ready(page)
    page.get_by_role("tab", name="Import").click()
    upload(page, "good.csv", GOOD_CSV)
    page.get_by_role("button", name="Import", exact=True).click()
    wait_ready(page)
    expect(page.get_by_text("good.csv: 1 row imported.")).to_be_visible(timeout=30_000)
    for name, data, says in BAD_JSON + BAD_CSV:
        upload(page, name, data)
        page.get_by_role("button", name="Import", exact=True).click()
        wait_ready(page)
        message = error_text(page, name)
        assert says in message and len(message) < 400, (name, message)
        expect(page.get_by_text("good.csv: 1 row imported.")).to_have_count(0)  # not stale
        assert_clean(page)
    shoot(page, "bad_input_knowledge_import")

    # Mark key facts → Upload a file: the same list, through the same reader
    open_page(page, base, "key_facts")
    page.get_by_text("Upload a file", exact=True).click()
    wait_ready(page)
    for name, data, says in BAD_CONVERSATIONS:
        upload(page, name, data)
        page.get_by_role("button", name="Open upload").click()
        wait_ready(page)
        message = error_text(page, name)
        assert says in message and len(message) < 400, (name, message)
        assert_clean(page)
    shoot(page, "bad_input_key_facts_upload")

    # The sidebar's snapshot picker: binary garbage and empty files
    page.get_by_text("Snapshot file", exact=True).click()
    wait_ready(page)
    for name, data, says in (
        ("garbage.npz", b"PK\x03\x04junk" * 100, "is not an Elastic Atlas snapshot"),
        ("empty.npz", b"", "is empty"),
    ):
        upload(page, name, data, where="[data-testid=stSidebar]")
        message = error_text(page, name)
        assert says in message and "snapshot: snapshot" not in message, message
        assert_clean(page)
    page.get_by_text("Live (in-process)", exact=True).click()
    wait_ready(page)


def test_typed_values_follow_the_engines_limits(bad_server: tuple[str, Path], page: Page) -> None:
    base, _ = bad_server
    long_text = "x" * 100_000
    # Playground: an empty session name is refused, a too-long message too
    open_page(page, base, "playground")
    session = page.get_by_label("Session", exact=True)
    session.fill("")
    session.press("Enter")
    wait_ready(page)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("hello there")
    box.press("Enter")
    wait_ready(page)
    assert "1 to 200 printable characters" in error_text(page, "session")
    session.fill("play")
    session.press("Enter")
    wait_ready(page)
    box.fill(long_text)
    box.press("Enter")
    wait_ready(page)
    message = error_text(page, "at most 8,000 allowed")
    assert "100,000 characters" in message and len(message) < 300
    assert_clean(page)

    # Mark key facts: a 100,000-character probe is refused on accept, nothing marked
    open_page(page, base, "key_facts")
    page.get_by_text("Upload a file", exact=True).click()
    wait_ready(page)
    upload(page, "trip.json", (ROOT / "sample_sessions" / "trip-approval.json").read_bytes())
    page.get_by_role("button", name="Open upload").click()
    expect(page.get_by_text("Candidate key facts")).to_be_visible(timeout=60_000)
    wait_ready(page)
    page.get_by_role("textbox", name="Probe question").fill(long_text)
    page.get_by_role("button", name="Accept as key fact").click()
    wait_ready(page)
    error_text(page, "1 problem(s); nothing was opened or saved")
    expect(page.get_by_text(re.compile(r"^Marked k"))).to_have_count(0)
    assert_clean(page)
    page.get_by_text("1 problem(s); nothing was opened or saved").first.evaluate(
        "e => e.scrollIntoView({block: 'center'})"
    )
    shoot(page, "bad_input_key_facts_probe")

    # Conflict review: the same session rule; the refused name is listed nowhere
    open_page(page, base, "conflict_review")
    open_expander(page, "Write a memory through the conflict guard")
    form = page.get_by_test_id("stForm")
    form.get_by_label("Memory").fill("The trip budget cap is 5,000 euros.")
    form.get_by_label("Session").fill("<script>x</script>")
    form.get_by_role("button", name="Write").click()
    wait_ready(page)
    assert "without < or >" in error_text(page, "session")
    sidebar = page.locator("[data-testid=stSidebar]")
    sidebar.get_by_text("Sessions", exact=True).first.click()
    expect(page.get_by_role("option", name="<script>x</script>")).to_have_count(0)
    page.keyboard.press("Escape")
    assert_clean(page)
    shoot(page, "bad_input_conflict_session")

    # Knowledge audit: a 50,000-character review note is refused, nothing approved
    open_page(page, base, "knowledge_audit")
    reviewer = page.get_by_label("Reviewer", exact=True)
    reviewer.fill("ana")
    reviewer.press("Enter")
    wait_ready(page)
    picker = page.get_by_role("combobox", name="Item version (review queue first)")
    before = picker.input_value()
    assert "pending_review" in before
    page.get_by_label("Note (optional, kept in the audit trail)").fill("n" * 50_000)
    page.get_by_role("button", name="Approve").click()
    wait_ready(page)
    message = error_text(page, "note")
    assert "50,000 characters" in message and "at most 8,000" in message
    expect(picker).to_have_value(before)
    # Approve with a short note: the picker then says the new status (not the old label)
    page.get_by_label("Note (optional, kept in the audit trail)").fill("checked")
    page.get_by_role("button", name="Approve").click()
    wait_ready(page)
    expect(page.get_by_text(re.compile(r": approved by ana\.$"))).to_be_visible(timeout=30_000)
    expect(picker).to_have_value(before.replace("pending_review", "active"))
    assert_clean(page)


def test_study_storage_is_offered_not_typed(bad_server: tuple[str, Path], page: Page) -> None:
    base, data = bad_server
    open_page(page, base, "ab_tuning")
    page.get_by_role("tab", name="Optuna sweep").click()
    open_expander(page, "Study storage")
    storage = page.get_by_role("combobox", name="Storage", exact=True)
    expect(storage).to_have_value("sweeps.sqlite (data folder)")
    other = page.get_by_role("textbox", name="Or another storage URL")
    other.fill("sqlite:////etc/atlas-e2e-anything.db")
    other.press("Enter")
    wait_ready(page)
    page.get_by_role("button", name="Run sweep").click()
    wait_ready(page)
    refused = error_text(page, "ATLAS_STUDY_STORAGE_URLS")
    assert "ATLAS_ALLOW_ANY_STUDY_STORAGE=1" in refused
    assert not Path("/etc/atlas-e2e-anything.db").exists()

    # The operator's PostgreSQL, unreachable: the failure never shows its password
    other.fill("")
    other.press("Enter")
    wait_ready(page)
    storage.click()
    page.get_by_role("option", name="postgresql+psycopg://u:***@127.0.0.1:1/db").click()
    wait_ready(page)
    page.get_by_role("button", name="Run sweep").click()
    failed = error_text(page, "127.0.0.1:1/db")
    assert "u:***@" in failed
    expect(page.get_by_text(refused[:40])).to_have_count(0)  # the old error is gone
    assert_clean(page)
    shoot(page, "bad_input_study_storage")
    log = (data / "streamlit.log").read_text()
    assert "secret" not in log


def test_readouts_follow_the_atlas(bad_server: tuple[str, Path], page: Page) -> None:
    base, _ = bad_server
    open_page(page, base, "playground")
    box = page.get_by_test_id("stChatInputTextArea")
    for text in ("The budget cap is 5000 euros", "I prefer the train to Munich"):
        box.fill(text)
        box.press("Enter")
        wait_ready(page)
    open_page(page, base, "live_graph")
    picker = page.get_by_role("combobox", name="Inspect a memory")
    before = picker.input_value()
    page.get_by_label("Let time pass (hours)").fill("8000")
    page.get_by_label("Let time pass (hours)").press("Enter")
    wait_ready(page)
    page.get_by_role("button", name="Skip ahead and decay").click()
    expect(page.get_by_text(re.compile(r"^Decay pass done"))).to_be_visible(timeout=30_000)
    wait_ready(page)
    after = picker.input_value()
    assert after != before, (before, after)  # the decay pass moved the shown weight
    picker.click()
    if not page.get_by_role("option").count():
        picker.press("ArrowDown")  # focused but closed: open the list
    expect(page.get_by_role("option").first).to_be_visible(timeout=10_000)
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    fresh = [" ".join(o.split()) for o in options]
    assert " ".join(after.split()) in fresh, (after, options)  # reads like the fresh options
    caption = page.get_by_text(re.compile(r"memories and \d+ links"))
    assert "labels left out" not in caption.inner_text()  # two memories: every label fits
    assert_clean(page)
    shoot(page, "bad_input_live_graph_after_decay")
    open_page(page, base, "weights")
    expect(page.get_by_text(re.compile(r"memories are below the eviction line"))).to_be_visible()
    expect(page.locator("[data-testid=stPlotlyChart] .main-svg").first).to_be_visible(
        timeout=30_000
    )
    page.wait_for_timeout(1_000)
    assert "/tmp/" not in page.inner_text("body")
    shoot(page, "bad_input_weights")
