"""Knowledge audit: the review queue and the health of the long-term knowledge tier."""

import streamlit as st

from memory_core.dashboard.access import Action, denial
from memory_core.dashboard.context_live import item_memories, live_graphs
from memory_core.dashboard.knowledge_view import (
    IMPORT_TYPES,
    AuditKeys,
    KnowledgeDesk,
    ReviewRequest,
    allowed_actions,
    apply_review,
    audit_rows,
    citation_rows,
    cited_rows,
    conflict_rows,
    edit_changes,
    error_rows,
    filter_items,
    import_summary,
    import_upload,
    item_label,
    item_row,
    last_seen,
    literal,
    open_knowledge,
    read_detail,
    read_overview,
    status_summary,
    version_rows,
)
from memory_core.dashboard.locations import shown_url
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.context_panel import context_links
from memory_core.dashboard.ui.identity import reviewer_identity
from memory_core.dashboard.ui.panels import keep_choice
from memory_core.dashboard.ui.shared import live_system
from memory_core.errors import AtlasError
from memory_core.knowledge import ItemStatus, ReviewAction, csv_columns

require_app_shell()


@st.cache_resource(show_spinner="Opening the knowledge base…")
def knowledge_desk() -> KnowledgeDesk:
    system = live_system()
    return open_knowledge(system.atlas.embedder, db=system.recording.db)


DATE = st.column_config.TextColumn(width=105)
COLUMNS = {
    "effective": DATE,
    "expires": DATE,
    "last verified": DATE,
    "source": st.column_config.TextColumn(width=130),
    "content": st.column_config.TextColumn(width="large"),
    "reason": st.column_config.TextColumn(width="large"),
    "flag": st.column_config.TextColumn(width="large"),
}


def table(rows: list[dict[str, object]], empty: str) -> None:
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch", column_config=COLUMNS)
    else:
        st.info(empty)


st.title("Knowledge audit")
try:
    desk = knowledge_desk()
except AtlasError as exc:
    st.error(literal(f"The knowledge base is unavailable: {exc}"))
    st.stop()
kb = desk.kb

identity = reviewer_identity()
blocked = denial(identity, Action.REVIEW)
import_blocked = denial(identity, Action.IMPORT)

summary = st.container()
tab_items, tab_stale, tab_cited, tab_low, tab_conflicts, tab_flagged, tab_import = st.tabs(
    [
        "Items",
        "Stale",
        "Expired but cited",
        "Low confidence",
        "Conflicting versions",
        "Flagged citations",
        "Import",
    ]
)
with tab_stale:
    stale_days = st.slider(
        "Not verified in N days",
        0,
        730,
        int(kb.settings.stale_days),
        step=5,
        key=AuditKeys.STALE_DAYS,
    )
with tab_low:
    threshold = st.slider(
        "Confidence below",
        0.0,
        1.0,
        float(kb.settings.low_confidence),
        step=0.05,
        key=AuditKeys.LOW_CONFIDENCE,
    )

with tab_import:  # before reading, so the tables below already show what it added
    st.caption(
        "CSV columns: " + ", ".join(csv_columns()) + ". JSON: a list of items or "
        '{"items": [...]}. Each row is checked by the ingestion gate on its own; '
        "imported items wait for review unless their source is trusted."
    )
    upload = st.file_uploader("Knowledge file", type=list(IMPORT_TYPES), key=AuditKeys.UPLOAD)
    last = st.session_state.get(AuditKeys.IMPORTED)
    repeat = upload is not None and last is not None and last[0] == upload.file_id
    clicked = st.button(
        "Import",
        disabled=upload is None or import_blocked is not None or repeat,
        help=import_blocked or ("This upload was imported already." if repeat else None),
    )
    if import_blocked:
        st.caption(import_blocked)
    if clicked and upload is not None and not repeat:
        try:
            report = import_upload(kb, upload.name, upload.getvalue(), identity=identity)
        except AtlasError as exc:
            st.session_state.pop(AuditKeys.IMPORTED, None)  # no older result under this error
            st.error(literal(f"Nothing imported. {exc}"))
        else:
            st.session_state[AuditKeys.IMPORTED] = (upload.file_id, upload.name, report)
            st.rerun()  # redraw with the button disabled for this upload
    imported = st.session_state.get(AuditKeys.IMPORTED)
    if imported is not None:
        _, name, report = imported
        message = import_summary(name, report)
        (st.warning if report.rejected_rows else st.success)(literal(message))
        if report.errors:
            st.dataframe(error_rows(report), hide_index=True, width="stretch")

try:
    overview = read_overview(kb, stale_days=stale_days, low_confidence=threshold)
except AtlasError as exc:
    st.error(literal(f"Could not read the knowledge base: {exc}"))
    st.stop()

with summary:
    columns = st.columns(5)
    for column, (label, count) in zip(columns, status_summary(overview.counts), strict=False):
        column.metric(label.capitalize(), count)
    columns[-1].metric("Flagged citations", len(overview.flagged))
    st.caption(
        literal(
            f"Database {shown_url(desk.db.url)} · sample knowledge: {desk.sample.added_items} items "
            f"added on this start, {desk.sample.skipped} already present."
        )
    )

with tab_items:
    f1, f2 = st.columns([2, 3])
    statuses = f1.multiselect(
        "Status", [s.value for s in ItemStatus], key=AuditKeys.STATUSES, placeholder="any status"
    )
    text = f2.text_input("Key, source or text contains", key=AuditKeys.TEXT)
    shown = filter_items(overview.items, statuses=statuses, text=text)
    st.caption(f"{len(shown)} of {len(overview.items)} versions")
    table([item_row(i) for i in shown], "No item matches the filters.")
with tab_stale:
    table(
        [item_row(i) for i in overview.stale],
        f"Every active item was verified in the last {stale_days} days.",
    )
with tab_cited:
    st.caption("Versions whose validity ended but that were still cited afterwards.")
    table(cited_rows(overview.expired_cited), "No expired version was cited after its end.")
with tab_low:
    table(
        [item_row(i) for i in overview.low_confidence],
        f"No active or pending item has confidence below {threshold:.2f}.",
    )
with tab_conflicts:
    st.caption("Keys with more than one active version.")
    table(conflict_rows(overview.conflicts), "No key has two active versions.")
with tab_flagged:
    st.caption("Memories and episodes that cited a version which has since changed or expired.")
    table(citation_rows(overview.flagged), "No citation needs review.")

st.subheader("Item detail")
if not overview.items:
    st.info("The knowledge base is empty. Import a CSV or JSON file above.")
    st.stop()
labels = {i.id: item_label(i) for i in overview.items}
keep_choice(AuditKeys.ITEM, labels, default=overview.items[0].id)  # labels show the status now
item_id = st.selectbox(
    "Item version (review queue first)", list(labels), format_func=labels.__getitem__,
    key=AuditKeys.ITEM,
)  # fmt: skip
try:
    detail = read_detail(kb, item_id)
except AtlasError as exc:
    st.error(literal(str(exc)))
    st.stop()
item = detail.item

st.text(item.content)
st.caption(
    literal(
        f"{item.label} · {item.source_kind.value} · status {item.status.value} · "
        f"confidence {item.confidence:.2f} · {item.citation_count} citations"
        + (f" · note: {item.review_note}" if item.review_note else "")
    )
)

st.markdown("**Versions of this key**")
st.dataframe(version_rows(detail), hide_index=True, width="stretch", column_config=COLUMNS)
for step in reversed(detail.history):
    title = (
        f"v{step.from_version} → v{step.to_version}"
        if step.from_version
        else (f"v{step.to_version} (first version)")
    )
    with st.expander(f"Diff {title}", expanded=step.to_version == item.version):
        st.code(step.diff or "(no textual change)", language="diff", wrap_lines=True)

st.markdown("**Citations of this version**")
table(citation_rows(detail.citations), "Nothing cited this version yet.")
with st.expander("Task context nodes from its memories"):
    context_links(live_graphs(live_system().player.rules), *item_memories(item, detail.citations))
st.markdown("**Audit trail of this key**")
table(audit_rows(detail.audit), "No audit entry.")

st.subheader("Review")
outcome = st.session_state.pop(AuditKeys.OUTCOME, None)
if outcome:
    st.success(literal(outcome))
actions = allowed_actions(item)
if blocked:
    st.info(blocked)
if not actions:
    st.caption(f"No review action applies to a version that is {item.status.value}.")
seen = last_seen(detail.audit, item.id)


def run(request: ReviewRequest) -> None:
    try:
        result = apply_review(kb, request, identity)  # re-checks the role
    except AtlasError as exc:
        st.error(literal(str(exc)))
        return
    st.session_state[AuditKeys.OUTCOME] = result.message
    st.session_state.pop(AuditKeys.NOTE, None)
    st.rerun()


note = st.text_input("Note (optional, kept in the audit trail)", key=AuditKeys.NOTE)
buttons = [a for a in actions if a is not ReviewAction.EDIT]
for column, action in zip(st.columns(4), buttons, strict=False):
    request = ReviewRequest(action, item.id, seen, note)
    if column.button(
        action.value.capitalize(),
        key=f"knowledge_{request.token}",
        disabled=blocked is not None,
        help=blocked,
        width="stretch",
        type="primary" if action is ReviewAction.APPROVE else "secondary",
    ):
        run(request)

if ReviewAction.EDIT in actions:
    with st.expander("Edit this pending version"), st.form(f"knowledge_edit_{item.id}_{seen}"):
        content = st.text_area("Content", item.content)
        confidence = st.number_input("Confidence", 0.0, 1.0, float(item.confidence), step=0.01)
        e1, e2 = st.columns(2)
        effective = e1.date_input("Effective from", item.effective_from.date())
        expires = e2.date_input(
            "Expires at (empty = no expiry)",
            item.expires_at.date() if item.expires_at else None,
        )
        if st.form_submit_button("Save edit", disabled=blocked is not None):
            changes = edit_changes(
                item,
                content=content,
                confidence=confidence,
                effective_from=effective,
                expires_at=expires,
            )
            if changes:
                run(ReviewRequest(ReviewAction.EDIT, item.id, seen, note, changes))
            else:
                st.warning("Nothing changed.")
