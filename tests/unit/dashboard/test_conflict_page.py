"""The conflict review page in Streamlit's AppTest, plus its logic module without a UI."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.conflicts import Span
from memory_core.conflicts.items import ItemStatus, ReviewAction, ReviewItem
from memory_core.dashboard import conflict_view as view
from memory_core.dashboard.access import Identity, Role
from memory_core.dashboard.conflict_view import (
    ConflictKeys,
    audit_rows,
    desk_for,
    item_filter,
    marked_html,
    neighbourhood,
    side_by_side,
    word_diff,
)
from memory_core.dashboard.jobs import SCAN
from memory_core.dashboard.ui.shared import job_registry, live_system
from memory_core.errors import AccessDeniedError, InputError

ROOT = Path(__file__).resolve().parents[3]
PAGE = str(ROOT / "pages" / "conflict_review.py")
K = ConflictKeys


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    st.cache_resource.clear()
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    yield at
    st.cache_resource.clear()


def write(at: AppTest, text: str, confidence: float = 1.0, session: str = "review") -> AppTest:
    at.text_area(key=K.WRITE_TEXT).set_value(text)
    at.text_input(key=K.WRITE_SESSION).set_value(session)
    at.slider(key=K.WRITE_CONFIDENCE).set_value(confidence)
    next(b for b in at.button if b.label == "Write").click().run()
    assert not at.exception, at.exception
    return at


def metric(at: AppTest, label: str) -> str:
    return str(next(m for m in at.metric if m.label == label).value)


def click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception
    return at


def queued_pair(at: AppTest, old: str, new: str) -> AppTest:
    """A hesitant newer statement (0.55) against a 0.5 one: the policy asks a human."""
    write(at, old, confidence=0.5)
    return write(at, new, confidence=0.55)


def test_empty_queue(app: AppTest) -> None:
    assert app.title[0].value == "Conflict review"
    assert metric(app, "Open") == "0"
    assert any("Nothing to review" in i.value for i in app.info)


def test_a_queued_pair_is_shown_escaped_side_by_side(app: AppTest) -> None:
    old = "<b>Note</b>: the budget is 5000 euros."
    queued_pair(app, old, "<script>x</script> The budget is now 6000 euros.")
    assert metric(app, "Open") == "1"
    frame = app.dataframe[0].value
    assert list(frame["kind"]) == ["value_change"]
    assert list(frame["old"]) == [old]  # dataframes show the text as it is
    bodies = [h.proto.body for h in app.get("html")]
    assert any("&lt;b&gt;Note&lt;/b&gt;" in b and "5000 euros</mark>" in b for b in bodies)
    assert any("&lt;script&gt;" in b and "6000 euros</mark>" in b for b in bodies)
    assert not any("<script>" in b or "<b>" in b for b in bodies)


def test_an_action_needs_a_reviewer_and_can_be_undone(app: AppTest) -> None:
    queued_pair(app, "The budget is 5000 euros.", "The budget is now 6000 euros.")
    assert next(b for b in app.button if b.label == "Accept new").disabled  # no name yet
    assert any("reviewer" in i.value for i in app.info)
    assert metric(app, "Open") == "1"

    app.text_input(key=K.REVIEWER).set_value("ana").run()
    click(app, "Accept new")
    assert any("accept_new recorded" in s.value for s in app.success)
    assert (metric(app, "Open"), metric(app, "Resolved")) == ("0", "1")
    app.selectbox(key=K.STATUS).set_value("all").run()
    audit = app.dataframe[-1].value
    assert list(audit["action"]) == ["accept_new"] and list(audit["reviewer"]) == ["ana"]

    click(app, "Undo")
    assert any("undone" in s.value for s in app.success)
    assert metric(app, "Open") == "1"
    assert list(app.dataframe[-1].value["action"]) == ["undo", "accept_new"]


def test_bulk_keep_both(app: AppTest) -> None:
    queued_pair(app, "The budget is 5000 euros.", "The budget is now 6000 euros.")
    queued_pair(app, "The meeting is on Tuesday.", "The meeting moved to Thursday.")
    assert metric(app, "Open") == "2"
    app.text_input(key=K.REVIEWER).set_value("ana").run()
    box = app.multiselect(key=K.BULK)
    box.set_value(list(box.options and [o for o in app.dataframe[0].value["id"]])).run()
    app.selectbox(key=K.BULK_ACTION).set_value(ReviewAction.KEEP_BOTH).run()
    click(app, "Apply to the selected items")
    assert (metric(app, "Open"), metric(app, "Resolved")) == ("0", "2")


def test_scan_finds_the_open_pair_again_without_duplicating_it(app: AppTest) -> None:
    queued_pair(app, "The budget is 5000 euros.", "The budget is now 6000 euros.")
    click(app, "Scan the atlas for contradictions")
    job = job_registry().latest(SCAN)  # a background job every browser session sees
    assert job is not None
    job.wait(60)
    app.run()
    assert any("queued 1 contradicting pairs" in t.value for t in app.text)
    assert any("Started by you; done." in str(c.value) for c in app.caption)
    assert metric(app, "Open") == "1"


# -- the logic, without a UI ----------------------------------------------------------


def item(old: str, new: str, spans: tuple[Span, ...] = ()) -> ReviewItem:
    return ReviewItem(
        id="i1",
        status=ItemStatus.OPEN,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        old_id="a",
        old_text=old,
        old_session_id="s",
        new_id="b",
        new_text=new,
        session_id="s",
        similarity=0.8,
        score=0.9,
        reason="r",
        kind="value_change",
        suggested=ReviewAction.ACCEPT_NEW,
        spans=spans,
    )


def test_marked_html_escapes_before_marking() -> None:
    out = marked_html("a <i>b</i> & c", [(2, 10), (8, 12)])
    assert out.startswith("a <mark") and "&lt;i&gt;b&lt;/i&gt; &amp;" in out
    assert out.count("<mark") == 1  # overlapping ranges merged
    assert marked_html("abc", [(5, 9)]) == "abc"


def test_word_diff_marks_only_the_changed_words() -> None:
    a, b = "The budget is 5000 euros.", "The budget is now 6000 euros."
    ra, rb = word_diff(a, b)
    assert [a[s:e] for s, e in ra] == ["5000"]
    assert [b[s:e] for s, e in rb] == ["now 6000"]


def test_side_by_side_prefers_valid_judge_spans() -> None:
    old, new = "The budget is 5000.", "The budget is 6000."
    good = item(old, new, (Span("a", 14, 18, "5000"), Span("b", 14, 18, "6000")))
    left, right = side_by_side(good)
    assert "5000</mark>" in left and "6000</mark>" in right
    stale = item(old, new, (Span("a", 0, 3, "xyz"),))  # does not match: falls back to a diff
    assert "5000.</mark>" in side_by_side(stale)[0]


def test_filters_and_audit_rows() -> None:
    flt = item_filter("resolved", ["negation"], "s1", " hi ", 0.5)
    assert (flt.status, flt.kinds, flt.session_id, flt.text) == (
        ItemStatus.RESOLVED,
        ("negation",),
        "s1",
        "hi",
    )
    assert item_filter("all").status is None
    with pytest.raises(InputError, match="status"):
        item_filter("pending")
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(32), clock=ManualClock())
    desk = desk_for(atlas, None)
    assert desk_for(atlas, None) is desk and not desk.persisted
    assert desk.guard.warmed.wait(timeout=300)  # a new desk's guard warms up on its own thread
    desk.guard.add("The budget is 5000 euros.", session_id="s", confidence=0.5)
    written = desk.guard.add("The budget is now 6000 euros.", session_id="s", confidence=0.55)
    (d,) = desk.guard.settled(written).decisions  # the second look's, when the first left it open
    entry = desk.review.act(d.item_id, "keep_old", reviewer="ana")
    (row,) = audit_rows([entry])
    assert row["action"] == "keep_old" and "deprecated 0.30" in row["after"]
    nodes, edges = neighbourhood(atlas, desk.queue.get(d.item_id))
    assert {n.id for n in nodes} >= {d.existing_id}
    assert all(e.source_id in {n.id for n in nodes} for e in edges)


def test_actions_check_the_role_server_side_and_change_nothing_when_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(32), clock=ManualClock())
    desk = desk_for(atlas, None)
    rita = Identity("rita", Role.REVIEWER, authenticated=True)
    view.write(desk, rita, "The budget is 5000 euros.", session_id="s", confidence=0.5)
    (d,) = view.write(
        desk, rita, "The budget is now 6000 euros.", session_id="s", confidence=0.55
    ).decisions
    assert d.item_id is not None
    done = view.act(desk, rita, d.item_id, ReviewAction.KEEP_OLD)
    assert done.reviewer == "rita"
    view.undo(desk, rita, done.id)  # open again, for the refused attempts below

    def state() -> tuple[object, ...]:
        item = desk.queue.get(d.item_id)
        nodes = sorted((n.id, n.status, round(n.confidence, 6)) for n in atlas.nodes())
        return item.status, len(desk.queue.audit(d.item_id)), nodes, desk.queue.counts()

    before = state()
    viewer = Identity("vera", Role.VIEWER, authenticated=True)
    nameless = Identity("anonymous", Role.REVIEWER)
    attempts = [
        lambda who: view.act(desk, who, d.item_id, ReviewAction.ACCEPT_NEW),
        lambda who: view.act(desk, who, d.item_id, ReviewAction.EDIT_MERGE, merged_text="merged"),
        lambda who: view.act_many(desk, who, [d.item_id], ReviewAction.KEEP_BOTH),
        lambda who: view.undo(desk, who, done.id),
    ]
    for attempt in attempts:
        for who in (viewer, nameless):
            with pytest.raises(AccessDeniedError):
                attempt(who)
    with pytest.raises(AccessDeniedError):
        view.write(desk, viewer, "The budget is 7000 euros.", session_id="s", confidence=0.6)
    with pytest.raises(AccessDeniedError):
        view.scan(desk, viewer)
    monkeypatch.setenv("ATLAS_READ_ONLY", "1")
    with pytest.raises(AccessDeniedError):
        view.act(
            desk, Identity("root", Role.ADMIN, authenticated=True), d.item_id, ReviewAction.KEEP_OLD
        )
    assert state() == before


def test_the_audit_entry_stays_on_screen_and_empty_states_are_true(app: AppTest) -> None:
    queued_pair(app, "The budget is 5000 euros.", "The budget is now 6000 euros.")
    merged = app.text_area(key=f"{K.MERGED}_{app.dataframe[0].value['id'][0]}")
    assert merged.value == ""  # nothing pre-filled to merge by accident
    assert next(b for b in app.button if b.label == "Edit / merge").disabled
    app.text_input(key=K.REVIEWER).set_value("ana").run()
    click(app, "Accept new")
    last = app.dataframe[0].value  # "Your last action", though the item left the open list
    assert list(last["action"]) == ["accept_new"] and list(last["reviewer"]) == ["ana"]
    assert last["at (UTC)"][0].endswith(" UTC") and "atlas time" in last.columns
    assert any("Nothing left to review: all 1 items are resolved" in i.value for i in app.info)
    click(app, "Undo")  # from the last-action panel
    assert metric(app, "Open") == "1"
    app.selectbox(key=K.STATUS).set_value("resolved").run()
    assert any("1 open and 0 resolved" in i.value and "Status to open" in i.value for i in app.info)


def test_queue_is_sorted_by_score() -> None:
    def scored(score: float, ident: str) -> ReviewItem:
        return dataclasses.replace(item("x", "y"), id=ident, score=score)

    items = [scored(0.2, "low"), scored(0.9, "high"), scored(0.5, "mid")]
    assert [i.id for i in view.by_score(items)] == ["high", "mid", "low"]


def test_audit_rows_show_real_utc_beside_the_skipped_atlas_time() -> None:
    from memory_core.dashboard.live import FastForwardClock

    base = ManualClock(1_750_000_000.0)
    clock = FastForwardClock(base)
    clock.advance(86_400 * 365)  # a year skipped ahead by the demo
    at = clock.now()
    assert clock.wall_time(at) == 1_750_000_000.0
    assert clock.wall_time(1_000.0) is None  # long before this clock started


def test_an_automatic_supersede_is_shown_where_it_happened_with_undo(app: AppTest) -> None:
    desk = desk_for(live_system().atlas, None)
    write(app, "The budget is 5000 euros.")
    old = next(n for n in desk.guard.atlas.nodes() if "5000" in n.content)
    write(app, "The budget is now 6000 euros.", confidence=0.8)
    assert any("Superseded automatically" in w.value for w in app.warning)
    assert desk.guard.atlas.get(old.id).status.value == "superseded"
    assert any(t.value == old.content for t in app.text)  # the retired memory, as text
    next(b for b in app.button if b.label == "Undo this supersede").click().run()
    assert not app.exception
    assert desk.guard.atlas.get(old.id).status.value == "active"
    assert any("active again" in s.value for s in app.success)
