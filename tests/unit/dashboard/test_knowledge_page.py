"""The knowledge audit page in Streamlit's AppTest, plus its logic module without a UI.

The page runs against a fresh SQLite file under a temporary ``ATLAS_DATA_DIR`` with the
hashing embedder; the shipped sample is loaded on first use.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from memory_core.dashboard.access import Identity, Role
from memory_core.dashboard.knowledge_view import (
    AuditKeys,
    ReviewRequest,
    apply_review,
    edit_changes,
    filter_items,
    import_upload,
    last_seen,
    literal,
    open_knowledge,
    read_detail,
    read_overview,
)
from memory_core.embedding import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.errors import AccessDeniedError, InputError
from memory_core.knowledge import ItemStatus, KnowledgeBase, ReviewAction
from memory_core.store.engine import Database, open_database

ROOT = Path(__file__).resolve().parents[3]


def reviewer(name: str) -> Identity:
    return Identity(name, Role.REVIEWER)


PAGE = str(ROOT / "pages" / "knowledge_audit.py")
HEADER = "key,content,source_kind,source_name,version,effective_from,expires_at,confidence\n"
GOOD_ROW = "policy.parking,Staff park free in lot B.,second_party_document,Facilities Wiki,1.0,2025-01-01,,0.9\n"
BAD_ROWS = (
    "policy.bad,Bad confidence.,second_party_document,Wiki,1.0,2025-01-01,,1.7\n"
    ",No key here.,second_party_document,Wiki,1.0,2025-01-01,,0.5\n"
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "atlas.db"
    open_database(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def data_dir(tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copyfile(template, tmp_path / "atlas.db")
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("ATLAS_DATABASE_URL", raising=False)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    return tmp_path


@pytest.fixture
def app(data_dir: Path) -> Iterator[AppTest]:
    st.cache_resource.clear()
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    yield at
    st.cache_resource.clear()


def with_reviewer(at: AppTest, name: str = "alice") -> AppTest:
    at.text_input(key=AuditKeys.REVIEWER).set_value(name).run()
    assert not at.exception, at.exception
    return at


def frame(at: AppTest, column: str) -> list[Any]:
    """Values of ``column`` in every dataframe that has it."""
    return [v for df in at.dataframe if column in df.value.columns for v in df.value[column]]


def button(at: AppTest, label: str) -> Any:
    return next(b for b in at.button if b.label == label)


def select_item(at: AppTest, key: str, version: str) -> None:
    box = at.selectbox(key=AuditKeys.ITEM)
    label = next(o for o in box.options if o.startswith(f"{key} v{version} "))
    box.select_index(box.options.index(label)).run()


def plain(markdown: str) -> str:
    """Undo ``literal``'s backslash escapes."""
    return re.sub(r"\\(.)", r"\1", markdown)


def metric(at: AppTest, label: str) -> int:
    return int(next(m for m in at.metric if m.label == label).value)


# -- the page ---------------------------------------------------------------------


def test_page_renders_the_sample_by_status(app: AppTest) -> None:
    assert app.title[0].value == "Knowledge audit"
    assert metric(app, "Pending review") == 2
    assert metric(app, "Active") >= 4
    assert metric(app, "Expired") >= 1
    keys = set(frame(app, "key"))
    assert {"policy.travel", "policy.leave", "policy.remote_work"} <= keys
    # expired-but-still-cited and conflicting/low-confidence panels are fed by the sample
    assert "cited after expiry" in {c for df in app.dataframe for c in df.value.columns}
    diffs = [c.value for c in app.code]
    assert diffs and all(d.startswith("---") or d == "(no textual change)" for d in diffs)


def test_sample_is_loaded_once(data_dir: Path, app: AppTest) -> None:
    st.cache_resource.clear()
    again = AppTest.from_file(PAGE, default_timeout=60)
    again.run()
    assert metric(again, "Pending review") == metric(app, "Pending review")
    assert "0 items added" in " ".join(c.value for c in again.caption)


def test_filters_change_what_is_shown(app: AppTest) -> None:
    total = len(frame(app, "version"))
    app.multiselect(key=AuditKeys.STATUSES).set_value(["pending_review"]).run()
    statuses = set(frame(app, "status"))
    assert "pending_review" in statuses
    shown = app.caption.values
    assert any(c.startswith("2 of ") for c in shown), shown
    app.multiselect(key=AuditKeys.STATUSES).set_value([]).run()
    app.text_input(key=AuditKeys.TEXT).set_value("remote").run()
    assert any(c.startswith("1 of ") for c in app.caption.values)
    assert len(frame(app, "version")) < total


def test_sliders_change_stale_and_low_confidence(app: AppTest) -> None:
    def count(column: str) -> int:
        return len(frame(app, column))

    app.slider(key=AuditKeys.LOW_CONFIDENCE).set_value(0.0).run()
    none_low = count("content")
    app.slider(key=AuditKeys.LOW_CONFIDENCE).set_value(1.0).run()
    assert count("content") > none_low
    app.slider(key=AuditKeys.STALE_DAYS).set_value(730).run()
    fewer_stale = count("content")
    app.slider(key=AuditKeys.STALE_DAYS).set_value(0).run()
    assert count("content") > fewer_stale


def test_review_buttons_are_disabled_without_a_reviewer(app: AppTest) -> None:
    select_item(app, "policy.remote_work", "1.0")
    approve = button(app, "Approve")
    assert approve.disabled
    assert any("reviewer" in i.value for i in app.info)


def test_approve_records_the_reviewer_and_a_double_submit_is_one_action(app: AppTest) -> None:
    with_reviewer(app)
    select_item(app, "policy.remote_work", "1.0")
    app.text_input(key=AuditKeys.NOTE).set_value("checked with HR").run()
    stale_click = button(app, "Approve")
    stale_click.click().run()
    assert not app.exception and not app.error, app.error
    assert any("approved by alice" in s.value for s in app.success)
    assert metric(app, "Pending review") == 1
    db = open_database()
    try:
        kb = KnowledgeBase(db.session, embedder=HashingEmbedder())
        with kb.unit() as unit:
            (item,) = unit.items.items(key="policy.remote_work")
            approvals = [
                e for e in unit.items.audit_log(item.id) if e.action is ReviewAction.APPROVE
            ]
        assert item.status is ItemStatus.ACTIVE and item.reviewer == "alice"
        assert [(e.actor, e.note) for e in approvals] == [("alice", "checked with HR")]
        # the same click replayed (a double submit) changes nothing
        request = ReviewRequest(ReviewAction.APPROVE, item.id, approvals[0].id - 1)
        outcome = apply_review(kb, request, reviewer("alice"))
        assert not outcome.applied and "Already approved by alice" in outcome.message
        with kb.unit() as unit:
            assert len(unit.items.audit_log(item.id)) == len(approvals) + 1  # submit + approve
    finally:
        db.close()


def test_reject_and_expire_from_the_page(app: AppTest) -> None:
    with_reviewer(app, "bob")
    select_item(app, "policy.travel.hotel", "1.0")
    button(app, "Reject").click().run()
    assert any("rejected by bob" in s.value for s in app.success)
    select_item(app, "policy.travel.hotel", "1.0")
    assert (
        app.selectbox(key=AuditKeys.ITEM)
        .options[app.selectbox(key=AuditKeys.ITEM).index or 0]
        .endswith("deprecated")
    )
    assert {"Expire"} == {b.label for b in app.button if b.label in ("Approve", "Reject", "Expire")}
    button(app, "Expire").click().run()
    assert any("expired by bob" in s.value for s in app.success)
    audit = frame(app, "action")
    assert audit[-2:] == ["reject", "expire"]
    assert frame(app, "by")[-2:] == ["bob", "bob"]


def test_edit_a_pending_version(app: AppTest) -> None:
    with_reviewer(app)
    select_item(app, "policy.remote_work", "1.0")
    app.text_area[0].set_value("Employees may work remotely up to three days per week.")
    app.number_input[0].set_value(0.8)
    next(b for b in app.button if b.label == "Save edit").click().run()
    assert not app.error, app.error
    assert any("edited by alice" in s.value for s in app.success)
    assert "three days" in app.text[0].value
    assert frame(app, "action")[-1] == "edit"


def test_import_shows_row_level_errors(app: AppTest) -> None:
    with_reviewer(app, "carol")
    data = (HEADER + GOOD_ROW + BAD_ROWS).encode()
    app.file_uploader(key=AuditKeys.UPLOAD).set_value(("policies.csv", data, "text/csv")).run()
    button(app, "Import").click().run()
    assert not app.exception, app.exception
    why = "1 row imported, 2 rows rejected: row 2: confidence: 1.7 is greater than the maximum"
    assert any(why in plain(w.value) for w in app.warning)
    errors = next(
        df.value for df in app.dataframe if list(df.value.columns) == ["row", "field", "problem"]
    )
    assert sorted(set(errors["row"])) == [2, 3]
    assert "confidence" in set(errors["field"])
    assert "key" in set(errors["field"])
    assert "policy.parking" in set(frame(app, "key"))
    assert button(app, "Import").disabled  # the same upload cannot be imported twice


def test_import_of_an_unreadable_file_explains(app: AppTest) -> None:
    with_reviewer(app)
    bad = b"key,colour\nx,red\n"
    app.file_uploader(key=AuditKeys.UPLOAD).set_value(("bad.csv", bad, "text/csv")).run()
    button(app, "Import").click().run()
    assert any("columns" in e.value and "colour" in e.value for e in app.error)


# -- the logic module -------------------------------------------------------------


@pytest.fixture
def desk(data_dir: Path) -> Iterator[tuple[KnowledgeBase, Database]]:
    db = open_database()
    kb = KnowledgeBase(
        db.session,
        embedder=HashingEmbedder(64),
        clock=ManualClock(datetime(2025, 6, 1, tzinfo=UTC)),
    )
    yield kb, db
    db.close()


def test_open_knowledge_loads_the_sample_idempotently(data_dir: Path) -> None:
    first = open_knowledge(HashingEmbedder(64))
    second = open_knowledge(HashingEmbedder(64), db=first.db)
    try:
        assert first.sample.added_items > 0
        assert second.sample.added_items == 0 and second.sample.skipped == first.sample.added_items
    finally:
        first.db.close()


def test_review_requires_a_reviewer_and_refuses_stale_requests(
    desk: tuple[KnowledgeBase, Database],
) -> None:
    kb, _ = desk
    open_knowledge(HashingEmbedder(64), db=desk[1])
    overview = read_overview(kb, stale_days=90, low_confidence=0.6)
    pending = next(i for i in overview.items if i.status is ItemStatus.PENDING_REVIEW)
    detail = read_detail(kb, pending.id)
    seen = last_seen(detail.audit, pending.id)
    with pytest.raises(AccessDeniedError, match="review"):
        apply_review(
            kb, ReviewRequest(ReviewAction.APPROVE, pending.id, seen), reviewer("anonymous")
        )
    edit = ReviewRequest(ReviewAction.EDIT, pending.id, seen, changes={"confidence": 0.7})
    assert apply_review(kb, edit, reviewer("dana")).applied
    with pytest.raises(InputError, match="changed since you opened it"):
        apply_review(kb, ReviewRequest(ReviewAction.APPROVE, pending.id, seen), reviewer("erin"))
    assert not apply_review(kb, edit, reviewer("dana")).applied  # the same edit again is one edit


def test_a_viewer_cannot_review_or_import_and_nothing_changes(
    desk: tuple[KnowledgeBase, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    kb, db = desk
    open_knowledge(HashingEmbedder(64), db=db)
    pending = next(
        i
        for i in read_overview(kb, stale_days=90, low_confidence=0.6).items
        if i.status is ItemStatus.PENDING_REVIEW
    )
    before = read_detail(kb, pending.id)
    seen = last_seen(before.audit, pending.id)
    offered = (ReviewAction.APPROVE, ReviewAction.REJECT, ReviewAction.EDIT, ReviewAction.EXPIRE)
    requests = [ReviewRequest(a, pending.id, seen, changes={"confidence": 0.3}) for a in offered]
    viewer = Identity("vera", Role.VIEWER, authenticated=True)
    for request in requests:
        with pytest.raises(AccessDeniedError):
            apply_review(kb, request, viewer)
    with pytest.raises(AccessDeniedError):
        import_upload(kb, "items.csv", (HEADER + GOOD_ROW).encode(), identity=viewer)
    monkeypatch.setenv("ATLAS_READ_ONLY", "1")  # even an admin is refused in read-only mode
    with pytest.raises(AccessDeniedError):
        apply_review(kb, requests[0], Identity("root", Role.ADMIN, authenticated=True))
    after = read_detail(kb, pending.id)
    assert after.audit == before.audit and after.item == before.item
    with kb.unit() as unit:
        assert unit.items.items(key="policy.parking") == []


def test_edit_changes_only_lists_changed_fields(desk: tuple[KnowledgeBase, Database]) -> None:
    kb, db = desk
    open_knowledge(HashingEmbedder(64), db=db)
    item = read_overview(kb, stale_days=90, low_confidence=0.6).items[0]
    same = edit_changes(
        item,
        content=item.content + "  ",
        confidence=item.confidence,
        effective_from=item.effective_from.date(),
        expires_at=item.expires_at.date() if item.expires_at else None,
    )
    assert same == {}
    changed = edit_changes(
        item,
        content="new text",
        confidence=0.1,
        effective_from=date(2030, 1, 1),
        expires_at=date(2031, 1, 1),
    )
    assert set(changed) == {"content", "confidence", "effective_from", "expires_at"}


def test_filter_items_by_status_and_text(desk: tuple[KnowledgeBase, Database]) -> None:
    kb, db = desk
    open_knowledge(HashingEmbedder(64), db=db)
    items = read_overview(kb, stale_days=90, low_confidence=0.6).items
    assert filter_items(items) == items
    expired = filter_items(items, statuses=["expired"])
    assert expired and all(i.status is ItemStatus.EXPIRED for i in expired)
    assert {i.key for i in filter_items(items, text="HOTEL")} == {"policy.travel.hotel"}


def test_import_upload_json_and_bad_names(desk: tuple[KnowledgeBase, Database]) -> None:
    kb, _ = desk
    doc = {
        "items": [
            {
                "key": "policy.gym",
                "content": "The gym is free for staff.",
                "source_kind": "second_party_document",
                "source_name": "Wiki",
                "version": "1.0",
                "effective_from": "2025-01-01",
            },
            {"key": "policy.gym2"},
        ]
    }
    report = import_upload(kb, "items.JSON", json.dumps(doc).encode(), identity=reviewer("frank"))
    assert [i.key for i in report.imported] == ["policy.gym"]
    assert report.rejected_rows == [2]
    with pytest.raises(InputError, match=r"\.csv or \.json"):
        import_upload(kb, "items.xlsx", b"", identity=reviewer("frank"))
    with pytest.raises(AccessDeniedError, match="import"):
        import_upload(kb, "items.json", b"[]", identity=reviewer("anonymous"))


def test_user_text_is_shown_literally(app: AppTest) -> None:
    hostile = "[click](javascript:alert(1)) <b>bold</b> *x* :smile: $x$"
    row = f'policy.hostile,"{hostile}",second_party_document,Wiki_[x](y),1.0,2025-01-01,,0.9\n'
    with_reviewer(app, "mallory*")
    app.file_uploader(key=AuditKeys.UPLOAD).set_value(
        ("hostile.csv", (HEADER + row).encode(), "text/csv")
    ).run()
    button(app, "Import").click().run()
    select_item(app, "policy.hostile", "1.0")
    assert app.text[0].value == hostile  # st.text: never markdown, never HTML
    caption = next(c.value for c in app.caption if "Wiki_" in plain(c.value))
    assert "\\[x\\]\\(y\\)" in caption and plain(caption).startswith("Wiki_[x](y) v1.0")


def test_literal_escapes_all_markdown_punctuation() -> None:
    text = "[a](javascript:b) *c* _d_ `e` :smile: $f$ <i>g</i> #h"
    escaped = literal(text)
    assert plain(escaped) == text
    assert not re.search(r"(?<!\\)[\[\]()*_`:$<>#]", escaped)


def test_import_errors_say_why_and_name_the_upload(desk: tuple[KnowledgeBase, Database]) -> None:
    from memory_core.dashboard.knowledge_view import import_summary

    kb, _ = desk
    frank = reviewer("frank")
    report = import_upload(kb, "items.json", b'[{"key": "policy.x"}]', identity=frank)
    summary = import_summary("items.json", report)
    assert summary.startswith("items.json: 0 rows imported, 1 row rejected: row 1: content: ")
    with pytest.raises(InputError) as broken:
        import_upload(kb, "mine.json", b"{bad", identity=frank)
    assert "mine.json: line 1: column 2: invalid JSON" in str(broken.value)
    assert "/tmp" not in str(broken.value)
    with pytest.raises(InputError, match=r"mine\.json: encoding: is UTF-16 text"):
        import_upload(kb, "mine.json", b"\xff\xfe\x00", identity=frank)
