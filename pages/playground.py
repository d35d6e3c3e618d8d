"""Playground: talk to the live atlas; see what each message recalls and why."""

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.conflict_view import desk_for, undo_supersede
from memory_core.dashboard.inspector import hits_table
from memory_core.dashboard.playground import converse
from memory_core.dashboard.rule_log import buffered, notes
from memory_core.dashboard.state import Keys
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import current_identity, denied
from memory_core.dashboard.ui.panels import graph_panel, legend
from memory_core.dashboard.ui.shared import dashboard_state, live_system, viewer
from memory_core.dashboard.ui.watch import follow_shared, own_change
from memory_core.errors import AtlasError

require_app_shell()
SUPERSEDED = "playground_superseded"

system = live_system()
state = dashboard_state()

st.title("Playground")
st.caption(
    "Each message is first used as a query (what it recalls is reinforced and ringed in red "
    "in the graph), then stored as a new memory of the chosen session."
)
c1, c2, c3, c4 = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
c1.text_input("Session", value="playground", key=Keys.PLAY_SESSION, max_chars=64)
remember = c2.toggle("Remember messages", value=True, key="playground_remember")
guarded = c3.toggle(
    "Conflict guard",
    value=True,
    key="playground_guard",
    help="On: a message that contradicts a stored memory supersedes it or goes to the "
    "Conflict review queue, as writes from agents do. Off: stored as is.",
)
top_k = c4.number_input("Recall at most", 1, 20, 5, key="playground_top_k")
follow_shared(system)

blocked = denied(Action.WRITE)
prompt = st.chat_input(
    blocked or "Tell the memory something, or ask it a question", disabled=blocked is not None
)
if prompt:
    with own_change(system):
        try:
            exchange = converse(
                system.atlas,
                prompt,
                session_id=state.playground_session,
                remember=remember,
                top_k=int(top_k),
                guard=desk_for(system.atlas, system.recording.db).guard if guarded else None,
                rules=system.player.rules,
            )
        except AtlasError as exc:
            st.error(str(exc))
        else:
            state.hits = exchange.hits
            state.add_chat("user", prompt)
            state.add_chat("assistant", exchange.reply)
            st.session_state[SUPERSEDED] = (exchange.stored, exchange.superseded)
            if remember:
                system.activity.record(
                    viewer(), f"wrote a message in session {state.playground_session}", "memories"
                )


def superseded_panel() -> None:
    """Memories the last message retired on its own, each with undo (the atlas is shared)."""
    stored, decisions = st.session_state.get(SUPERSEDED, (None, ()))
    for n, decision in enumerate(decisions):
        with st.container(border=True):
            st.warning("Your message superseded this memory automatically:")
            st.text(decision.existing_text)
            if st.button("Undo this supersede", key=f"playground_undo_{n}"):
                try:
                    desk = desk_for(system.atlas, system.recording.db)
                    undo_supersede(desk, current_identity(), decision, stored and stored.id)
                except AtlasError as exc:
                    st.error(str(exc))
                else:
                    st.session_state.pop(SUPERSEDED, None)
                    system.activity.record(viewer(), "undid an automatic supersede", "memories")
                    st.rerun()


chat_col, graph_col = st.columns([2, 3])
with chat_col:
    superseded_panel()
    if not state.chat:
        st.caption("No messages yet. Try: 'I prefer the train over flying' then 'how do I travel?'")
    for entry in state.chat[-20:]:
        with st.chat_message(entry.role):
            st.text(entry.text)
with graph_col:
    graph_panel(
        system.atlas,
        state.node_filter,
        version=system.buffer.last_seq,
        highlight=state.highlight,
        height=460,
        notes=notes(buffered(system.buffer)),
    )
    legend()

st.subheader("Why these memories: score breakdown of the last recall")
if state.hits:
    st.dataframe(hits_table(state.hits), hide_index=True, width="stretch")
else:
    st.caption("Send a message to see what it recalls.")
