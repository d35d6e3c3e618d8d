"""Conflict review: contradictions the guard queued, side by side, with audited undoable actions."""

import streamlit as st

from memory_core.conflicts import KINDS, ReviewAction
from memory_core.dashboard.access import Action, denial
from memory_core.dashboard.conflict_view import (
    ACTION_LABELS,
    BULK_ACTIONS,
    STATUS_CHOICES,
    ConflictKeys,
    act,
    act_many,
    audit_rows,
    automatic_supersedes,
    by_score,
    decision_lines,
    desk_for,
    empty_state,
    item_filter,
    item_label,
    neighbourhood,
    queue_rows,
    side_by_side,
    start_scan,
    undo,
    undo_supersede,
    undoable,
    write,
)
from memory_core.dashboard.context_live import held_nodes, is_context_item, live_graphs
from memory_core.dashboard.graph_view import build_graph
from memory_core.dashboard.jobs import SCAN, job_caption
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.context_panel import context_links
from memory_core.dashboard.ui.identity import current_identity, reviewer_identity
from memory_core.dashboard.ui.shared import job_registry, live_system, viewer
from memory_core.errors import AtlasError

require_app_shell()

SHOWN = 200

system = live_system()
atlas = system.atlas
desk = desk_for(atlas, system.recording.db)
queue = desk.queue
wall_time = system.clock.wall_time
K = ConflictKeys

st.title("Conflict review")
st.caption(
    "Contradictions found in the live atlas: the policy resolves clear cases itself and "
    "queues the rest here. "
    + (
        "The queue is stored in the database."
        if desk.persisted
        else "Recording is off: the queue lives in memory."
    )
)
flash = st.session_state.pop(K.FLASH, None)
if flash:
    st.success(flash)

identity = reviewer_identity()  # the sidebar's name, shared with the knowledge audit
writer = current_identity()  # writing needs no name
write_blocked = denial(writer, Action.WRITE)
with st.expander("Write a memory through the conflict guard, or scan the atlas"):
    with st.form("conflict_write"):
        text = st.text_area("Memory", key=K.WRITE_TEXT)
        w1, w2 = st.columns(2)
        session = w1.text_input("Session", value="review", key=K.WRITE_SESSION)
        confidence = w2.slider("Confidence", 0.0, 1.0, 1.0, 0.05, key=K.WRITE_CONFIDENCE)
        written = st.form_submit_button("Write", disabled=write_blocked is not None)
    if written:
        try:
            st.session_state[K.WRITTEN] = write(
                desk, writer, text, session_id=session, confidence=confidence
            )
        except AtlasError as exc:
            st.session_state.pop(K.WRITTEN, None)
            st.error(str(exc))
    result = st.session_state.get(K.WRITTEN)
    if result is not None:  # what the last write did stays on screen, with undo
        for line in decision_lines(result):
            st.text(line)
        for n, decision in enumerate(automatic_supersedes(result)):
            with st.container(border=True):
                st.warning("Superseded automatically by this write (no review asked):")
                st.text(decision.existing_text)
                if st.button("Undo this supersede", key=f"undo_supersede_{n}"):
                    try:
                        undo_supersede(desk, writer, decision, result.node and result.node.id)
                    except AtlasError as exc:
                        st.error(str(exc))
                    else:
                        st.session_state.pop(K.WRITTEN, None)
                        st.session_state[K.FLASH] = "The superseded memory is active again."
                        st.rerun()
    scan_job = job_registry().latest(SCAN)
    scanning = scan_job is not None and scan_job.running
    if st.button(
        "Scan the atlas for contradictions",
        help=write_blocked
        or "Queues every contradiction among active memories, session by "
        "session, in the background: a reload or another browser sees its progress.",
        disabled=write_blocked is not None or scanning,
    ):
        try:
            start_scan(desk, writer, job_registry(), viewer())
        except AtlasError as exc:
            st.error(str(exc))
        else:
            st.rerun()

    def scan_status() -> None:
        job = job_registry().latest(SCAN)
        if job is None:
            return
        st.progress(job.progress, text=f"{job.stage} · {job.progress:.0%}")
        st.caption(job_caption(job, viewer().viewer))
        if job.error:
            st.error(job.error)
        for failure in job.failures:
            st.warning(f"Not scanned: {failure}")
        if not job.running:
            st.text(f"The scan queued {job.result or 0} contradicting pairs.")
            if st.session_state.pop("conflict_scan_polling", False):
                st.rerun()  # the queue below and the button come back at once

    st.session_state["conflict_scan_polling"] = scanning
    st.fragment(scan_status, run_every=1.0 if scanning else None)()


def last_action() -> None:
    """This session's last action and its audit entries, whatever the filters now show."""
    done = st.session_state.get(K.LAST)
    if not done:
        return
    with st.container(border=True):
        st.markdown("**Your last action**")
        rows = [
            row
            for item_id, entry_id in done
            for row in audit_rows(queue.audit(item_id), wall_time)
            if row["#"] == entry_id
        ]
        st.dataframe(rows, hide_index=True, width="stretch")
        revertible = [
            e.id for item_id, _ in done for e in undoable(queue.audit(item_id))
            if (item_id, e.id) in done
        ]  # fmt: skip
        if revertible and st.button(
            "Undo" if len(revertible) == 1 else f"Undo all {len(revertible)}",
            key="conflict_undo_last",
            disabled=review_blocked is not None,
        ):
            try:
                reverted = [undo(desk, identity, entry_id) for entry_id in revertible]
            except AtlasError as exc:
                st.error(str(exc))
            else:
                st.session_state[K.LAST] = [(e.item_id, e.id) for e in reverted]
                st.session_state[K.FLASH] = (
                    ", ".join(f"#{i}" for i in revertible) + " undone (audit entries "
                    + ", ".join(f"#{e.id}" for e in reverted) + ")."
                )  # fmt: skip
                st.rerun()


counts = queue.counts()
m1, m2, m3 = st.columns([1, 1, 3])
m1.metric("Open", counts.open)
m2.metric("Resolved", counts.resolved)
m3.caption(
    "Open by kind: " + (", ".join(f"{k} {v}" for k, v in counts.open_by_kind.items()) or "none")
)

f1, f2, f3, f4, f5 = st.columns([1, 2, 1, 2, 1])
status = f1.selectbox("Status", STATUS_CHOICES, key=K.STATUS)
kinds = f2.multiselect("Kind", [k for k in KINDS if k != "none"], key=K.KINDS)
session_filter = f3.text_input("Session", key=K.SESSION)
text_filter = f4.text_input("Text contains", key=K.TEXT)
min_score = f5.number_input("Min score", 0.0, 1.0, 0.0, 0.05, key=K.MIN_SCORE)
try:
    flt = item_filter(status, kinds, session_filter, text_filter, min_score)
    total = queue.count(flt)
    items = by_score(queue.items(flt, limit=max(total, 1)))[:SHOWN]
except AtlasError as exc:
    st.error(str(exc))
    st.stop()
review_blocked = denial(identity, Action.REVIEW)
last_action()  # the audit entry of what this reviewer just did stays in view
narrowed = bool(kinds or session_filter.strip() or text_filter.strip() or min_score > 0)
if not items:
    st.info(empty_state(status, counts, narrowed=narrowed))
    st.stop()
st.caption(
    f"{total} matching items, highest score first"
    + (f" (first {SHOWN} shown)" if total > SHOWN else "")
)
st.dataframe(queue_rows(items), hide_index=True, width="stretch")
labels = {i.id: item_label(i) for i in items}
if review_blocked:
    st.info(review_blocked)

open_ids = [i.id for i in items if i.status.value == "open"]
with st.expander(f"Bulk action ({len(open_ids)} open items shown)"):
    chosen = st.multiselect("Items", open_ids, format_func=labels.__getitem__, key=K.BULK)
    bulk_action = st.selectbox(
        "Action", BULK_ACTIONS, format_func=ACTION_LABELS.__getitem__, key=K.BULK_ACTION
    )
    if st.button("Apply to the selected items", disabled=not chosen or review_blocked is not None):
        try:
            done = act_many(desk, identity, chosen, bulk_action)
            st.session_state[K.FLASH] = f"{bulk_action.value} applied to {len(done)} items."
            st.session_state[K.LAST] = [(e.item_id, e.id) for e in done]
            st.rerun()
        except AtlasError as exc:
            st.error(str(exc))

selected = st.selectbox("Item", list(labels), format_func=labels.__getitem__, key=K.ITEM)
item = queue.get(selected)
old_html, new_html = side_by_side(item)
left, right = st.columns(2)
left.subheader("Old")
left.caption(f"{item.old_id} · session {item.old_session_id}")
left.html(old_html)
right.subheader("New")
right.caption(f"{item.new_id or '(folded into the old memory)'} · session {item.session_id}")
right.html(new_html)
st.text(
    f"{item.kind} · score {item.score:.2f} · similarity {item.similarity:.2f} · "
    f"suggested: {item.suggested.value} · status: {item.status.value}"
    + (f" ({item.resolution.value} by {item.resolved_by})" if item.resolution else "")
)
st.text(f"Detector: {item.reason}")
with st.expander(
    "Task context nodes from these memories", expanded=is_context_item(item.reason)
):  # a change the task context graph held back: its node is what the reviewer decides on
    context_links(
        live_graphs(system.player.rules),
        [item.old_id, item.new_id],
        [item.old_session_id, item.session_id],
        held_nodes(system.player.rules),
    )

if item.status.value == "open":
    a1, a2, a3 = st.columns(3)
    clicked = None
    for column, action in zip((a1, a2, a3), BULK_ACTIONS, strict=True):
        if column.button(
            ACTION_LABELS[action],
            key=f"conflict_{action.value}_{item.id}",
            width="stretch",
            disabled=review_blocked is not None,
        ):
            clicked = action
    merged = st.text_area(
        "Merged text (replaces both)",
        key=f"{K.MERGED}_{item.id}",
        placeholder="Write the one statement that should replace both, then press Edit / merge.",
    )
    if st.button(
        ACTION_LABELS[ReviewAction.EDIT_MERGE],
        key=f"conflict_edit_merge_{item.id}",
        disabled=review_blocked is not None or not merged.strip(),
        help=review_blocked or (None if merged.strip() else "Write the merged text first."),
    ):
        clicked = ReviewAction.EDIT_MERGE
    if clicked is not None:
        try:
            entry = act(desk, identity, item.id, clicked, merged_text=merged)
            st.session_state[K.FLASH] = f"{clicked.value} recorded as audit entry #{entry.id}."
            st.session_state[K.LAST] = [(item.id, entry.id)]
            st.rerun()
        except AtlasError as exc:
            st.error(str(exc))

st.subheader("Audit trail")
entries = queue.audit(item.id)
if entries:
    st.dataframe(audit_rows(entries, wall_time), hide_index=True, width="stretch")
    revertible = undoable(entries)
    if revertible:
        u1, u2 = st.columns([3, 1], vertical_alignment="bottom")
        undo_id = u1.selectbox(
            "Entry to undo",
            [e.id for e in revertible],
            format_func=lambda i: f"#{i}",
            key=f"{K.UNDO}_{item.id}",
        )
        if u2.button(
            "Undo", key=f"conflict_undo_button_{item.id}", disabled=review_blocked is not None
        ):
            try:
                reverted = undo(desk, identity, undo_id)
                st.session_state[K.FLASH] = f"Entry #{undo_id} undone (audit entry #{reverted.id})."
                st.session_state[K.LAST] = [(item.id, reverted.id)]
                st.rerun()
            except AtlasError as exc:
                st.error(str(exc))
else:
    st.caption("No action on this item yet.")

st.subheader("Graph neighbourhood")
nodes, edges = neighbourhood(atlas, item)
if nodes:
    pair = {i: 1.0 for i in (item.old_id, item.new_id) if i is not None}
    view = build_graph(
        nodes,
        edges,
        highlight=pair,
        max_nodes=len(nodes),
        height_px=360,
    )
    st.iframe(view.html, height=368)
    st.caption(
        f"The pair (red rings) and {len(nodes) - len(pair)} neighbours; {view.edge_count} links."
    )
else:
    st.caption("Neither memory is in the atlas any more.")
