"""Eviction log: what was forgotten, when and why, with export and restore."""

from datetime import timedelta

import streamlit as st

from memory_core import EvictionReason, MemoryEvicted
from memory_core.dashboard.access import Action
from memory_core.dashboard.eviction_view import (
    DB_SORT_KEYS,
    SORT_KEYS,
    EvictionQuery,
    empty_text,
    matching_rows,
    query_database,
    query_events,
    reason_counts,
    row_from_event,
    time_range,
    to_csv,
)
from memory_core.dashboard.rule_log import (
    RULE_LABELS,
    buffered,
    rule_rows,
    stored_rule_rows,
    undo_forget,
)
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import denied
from memory_core.dashboard.ui.shared import current_atlas, dashboard_state, followed, live_system
from memory_core.errors import AtlasError

require_app_shell()

system = live_system()
state = dashboard_state()
db = system.recording.db

st.title("Eviction log")
agent = followed()
if agent is None:
    origin = st.radio(
        "Log",
        ["Live atlas (memory)", "Database"],
        horizontal=True,
        key="evictions_origin",
        disabled=db is None,
        help=None if db else f"No database: {system.recording.error}",
    )
    from_db = origin == "Database" and db is not None
    events = [e for e in system.buffer.events(types=("evicted",)) if isinstance(e, MemoryEvicted)]
else:  # the followed agent's own log, newer than its snapshot too
    st.caption(f"Database log of the {agent.label}.")
    from_db, events = db is not None, []
memory_rows = [row_from_event(e) for e in events]

f1, f2, f3 = st.columns(3)
reasons = f1.multiselect("Reason", [r.value for r in EvictionReason], key="evictions_reasons")
sessions = sorted(
    {r.session_id for r in memory_rows} | set(current_atlas()[0].sessions() if agent else ())
)
session = f2.selectbox("Session", ["(all)", *sessions], key="evictions_session")
text = f3.text_input("Text contains", key="evictions_text")
since = until = None
bounds = None if from_db else time_range(memory_rows)
if bounds is not None:
    low, high = bounds
    # No key: when new evictions widen the range, the slider starts over at the full range.
    picked = st.slider(
        "Time range", low, high, (low, high), step=timedelta(minutes=1), format="YYYY-MM-DD HH:mm"
    )
    if picked != (low, high):
        since, until = picked
erased = sum(r.erased for r in memory_rows)
show_erased = (
    not from_db
    and erased > 0
    and st.checkbox(
        f"Show {erased} evictions whose text was erased",
        key="evictions_erased",
        help="A purged session (the demo's Reset too) keeps only when, why and at what weight: "
        "its text is gone, so these rows can be neither searched nor restored.",
    )
)
s1, s2, s3 = st.columns(3)
sort_options = DB_SORT_KEYS if from_db else SORT_KEYS
sort_by = s1.selectbox("Sort by", sort_options, key="evictions_sort")
descending = s2.toggle("Newest / largest first", value=True, key="evictions_desc")
page_size = s3.selectbox("Rows per page", [10, 25, 50, 100], index=1, key="evictions_page_size")

try:
    query = EvictionQuery(
        reasons=tuple(reasons),
        session_id=None if session == "(all)" else session,
        since=since,
        until=until,
        text=text,
        sort_by=sort_by,
        descending=descending,
        page=state.eviction_page,
        page_size=page_size,
        include_erased=show_erased,
    )
    page = (
        query_database(db.events, query, atlas_id=agent.atlas_id if agent else None)
        if from_db and db
        else query_events(events, query)
    )
    if page.total and query.page >= page.pages:
        state.eviction_page = page.pages - 1
        st.rerun()
except AtlasError as exc:
    st.error(str(exc))
    st.stop()

counts = reason_counts(memory_rows)
st.caption(
    f"{page.total} matching evictions · page {page.page + 1} of {page.pages}"
    + (" · in this run: " + ", ".join(f"{k} {v}" for k, v in counts.items()) if counts else "")
)
if page.rows:
    st.dataframe([r.display_record() for r in page.rows], hide_index=True, width="stretch")
else:
    st.info(empty_text(memory_rows, query) if not from_db else "No eviction matches the filters.")

p1, p2, p3 = st.columns([1, 1, 4])
if p1.button("Previous", disabled=page.page == 0, width="stretch"):
    state.eviction_page = page.page - 1
    st.rerun()
if p2.button("Next", disabled=page.page + 1 >= page.pages, width="stretch"):
    state.eviction_page = page.page + 1
    st.rerun()
export = matching_rows(memory_rows, query) if not from_db else list(page.rows)
p3.download_button(
    "Download CSV",
    to_csv(export),
    file_name="evictions.csv",
    mime="text/csv",
    disabled=not export,
    help="All matching rows" if not from_db else "This page",
)

st.subheader("Restore")
restorable = [r for r in page.rows if r.restorable]
if not restorable:
    st.caption("No restorable eviction on this page (content must have been logged).")
else:
    labels = {
        r.key: f"{r.session_id} · {r.reason} · {r.content[:60] if r.content else ''}"
        for r in restorable
    }
    chosen = st.selectbox(
        "Evicted memory", list(labels), format_func=labels.__getitem__, key="evictions_restore"
    )
    row = next(r for r in restorable if r.key == chosen)
    st.text(row.content or "")

    def _restore() -> None:
        try:
            result = system.ledger.restore(system.atlas, row)
        except AtlasError as exc:
            st.session_state["evictions_restore_msg"] = f"Not restored: {exc}"
        else:
            st.session_state["evictions_restore_msg"] = f"Restored as {result.node.id}."

    done = system.ledger.restored_id(row)
    blocked = denied(Action.WRITE)
    st.button(
        "Restore into the live atlas",
        on_click=_restore,
        disabled=blocked is not None or (done is not None and done in system.atlas),
        help=blocked,
    )
    message = st.session_state.pop("evictions_restore_msg", None)
    if message:
        st.caption(message)
    elif done is not None:
        st.caption(f"Already restored as {done}.")

st.subheader("Rules of the agent loop")
st.caption(
    "What the orchestrator did to memories without evicting them: sessions folded into "
    "episode summaries, statements corrected too often sent to knowledge review, memories "
    "soft-deleted because the user asked to forget them (kept here for audit)."
)
rule_filter = st.multiselect(
    "Rule", list(RULE_LABELS), format_func=RULE_LABELS.get, key="rules_kind"
)
scope = None if session == "(all)" else session
try:
    rules_found = (
        stored_rule_rows(db.events, atlas_id=agent.atlas_id if agent else None, session_id=scope)
        if from_db and db
        else rule_rows(buffered(system.buffer), session_id=scope)
    )
except AtlasError as exc:
    st.error(str(exc))
    rules_found = []
rules_found = [r for r in rules_found if not rule_filter or r.rule in rule_filter]
if not rules_found:
    st.info(
        "No rule has fired yet. A session past the episode threshold, a statement "
        "corrected three times or a 'forget what I just said' makes one."
    )
else:
    held = None if agent else system.atlas
    st.dataframe([r.display_record(held) for r in rules_found], hide_index=True, width="stretch")
    undoable = [r for r in rules_found if r.undoable and not agent]
    if undoable:
        picked = st.selectbox(
            "Soft delete to undo",
            range(len(undoable)),
            format_func=lambda i: f"{undoable[i].session_id} · {undoable[i].message}",
            key="rules_undo",
        )
        blocked = denied(Action.WRITE)
        if st.button("Undo soft delete", disabled=blocked is not None, help=blocked):
            restored = undo_forget(system.atlas, undoable[picked])
            st.caption(f"Active again: {', '.join(restored)}" if restored else "Nothing to undo.")
