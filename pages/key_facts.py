"""Mark key facts: open an imported or recorded conversation, accept proposed key facts,
word their probes and save the conversation where the A/B tuning page lists it.

Thin page: opening, proposing, validating and saving live in memory_core.dashboard.marking
and memory_core.dashboard.fact_candidates.
"""

from typing import Any

import streamlit as st

from memory_core.dashboard.access import Action
from memory_core.dashboard.conversations import OWN_PREFIX
from memory_core.dashboard.fact_candidates import Candidate, propose, unmarked
from memory_core.dashboard.live import embedder_from_env
from memory_core.dashboard.locations import shown_path
from memory_core.dashboard.marking import (
    DETECT,
    EXPECTS,
    FORMATS,
    add_fact,
    fact_rows,
    open_saved,
    open_upload,
    problem_rows,
    save_conversation,
    saved_names,
    with_facts,
)
from memory_core.dashboard.ui.app_shell import require_app_shell
from memory_core.dashboard.ui.identity import denied
from memory_core.errors import AtlasError, SessionFormatError
from memory_core.harness import Conversation
from memory_core.paths import conversations_dir

require_app_shell()

DRAFT_KEY, ORIGIN_KEY = "marking_draft", "marking_origin"
UPLOADED_KEY, CANDIDATES_KEY = "marking_uploaded", "marking_candidates"
FLASH_KEY = "marking_flash"  # shown once after the rerun an accepted fact causes
VERSION_KEY = "marking_version"  # bumped on every change: the facts table starts afresh
SHOWN = 30  # candidates in the table; the picker offers them all


def show_problems(exc: SessionFormatError) -> None:
    st.error(f"{exc.source}: {len(exc.problems)} problem(s); nothing was opened or saved.")
    st.dataframe(problem_rows(exc.problems), hide_index=True, width="stretch")


def start(conversation: Conversation, origin: str) -> None:
    st.session_state[DRAFT_KEY] = conversation
    st.session_state[ORIGIN_KEY] = origin
    st.session_state[VERSION_KEY] = st.session_state.get(VERSION_KEY, 0) + 1
    st.session_state.pop(UPLOADED_KEY, None)


def open_panel() -> None:
    source = st.radio("Open", ["From the data folder", "Upload a file"], horizontal=True)
    if source == "From the data folder":
        names = saved_names()
        if not names:
            st.info(
                f"No conversations in {shown_path(conversations_dir())} yet: import one (`atlas import "
                "recording|openai-chat|locomo ... --out data/conversations`) or upload a file."
            )
            return
        pick, button = st.columns([4, 1], vertical_alignment="bottom")
        name = pick.selectbox("Conversation", names, format_func=lambda n: OWN_PREFIX + n)
        if button.button("Open conversation", type="primary"):
            try:
                start(open_saved(name), OWN_PREFIX + name)
            except SessionFormatError as exc:
                show_problems(exc)
        return
    upload = st.file_uploader(
        "Conversation file (atlas-session/1, OpenAI chat JSON/JSONL, LoCoMo, LongMemEval)",
        type=["json", "jsonl"],
    )
    fmt = st.selectbox("Format", [DETECT, *FORMATS])
    if st.button("Open upload", type="primary", disabled=upload is None) and upload is not None:
        try:
            found = open_upload(upload.name, upload.getvalue(), fmt)
        except SessionFormatError as exc:
            st.session_state.pop(UPLOADED_KEY, None)  # an older upload's list is not this one's
            show_problems(exc)
        except AtlasError as exc:
            st.session_state.pop(UPLOADED_KEY, None)
            st.error(f"Not opened: {exc}")
        else:
            if len(found) == 1:
                start(found[0], f"upload {upload.name}")
            else:
                st.session_state[UPLOADED_KEY] = found
    several: list[Conversation] | None = st.session_state.get(UPLOADED_KEY)
    if several:
        pick, button = st.columns([4, 1], vertical_alignment="bottom")
        index = pick.selectbox(
            f"The upload holds {len(several)} conversations",
            range(len(several)),
            format_func=lambda i: f"{several[i].id} · {several[i].title}",
        )
        if button.button("Open this one"):
            start(several[index], f"upload {several[index].id}")


def candidates(conversation: Conversation) -> list[Candidate]:
    """Proposed once per opened conversation (embedding every turn is the slow part)."""
    key = (conversation.id, sum(len(s.turns) for s in conversation.sessions))
    cached = st.session_state.get(CANDIDATES_KEY)
    if cached is None or cached[0] != key:
        with st.spinner("Reading the conversation for candidate key facts…"):
            cached = (key, propose(conversation, embedder_from_env()))
        st.session_state[CANDIDATES_KEY] = cached
    found: list[Candidate] = cached[1]
    return found


def summary(conversation: Conversation) -> None:
    st.subheader(conversation.title)
    st.caption(f"`{conversation.id}` · {st.session_state[ORIGIN_KEY]} · {conversation.description}")
    columns = st.columns(4)
    columns[0].metric("Sessions", len(conversation.sessions))
    columns[1].metric("Turns", sum(len(s.turns) for s in conversation.sessions))
    columns[2].metric("Recorded reads", len(conversation.reads or ()))
    columns[3].metric("Key facts", len(conversation.key_facts))


def candidates_panel(conversation: Conversation) -> None:
    st.subheader("Candidate key facts")
    open_ones = unmarked(candidates(conversation), conversation)
    if not open_ones:
        st.caption("No unmarked turn states a value, says much, is referred back to or was read.")
        return
    st.caption(
        "Turns that state a name, number, date, time or preference; say much (information "
        "density, in the top quarter here); are referred back to by a later turn (cosine "
        "similarity); or were returned by the agent's recorded reads. Turns the agent read first, "
        "then the densest."
    )
    st.dataframe(
        [
            {"turn": c.turn_id, "speaker": c.speaker, "text": c.text, "why": "; ".join(c.reasons)}
            for c in open_ones[:SHOWN]
        ],
        hide_index=True,
        width="stretch",
        column_config={
            "turn": st.column_config.TextColumn(width=100),
            "speaker": st.column_config.TextColumn(width=90),
            "text": st.column_config.TextColumn(width=390),
            "why": st.column_config.TextColumn(width=400),
        },
    )
    by_turn = {c.turn_id: c for c in open_ones}
    turn_id = st.selectbox(
        "Candidate",
        list(by_turn),
        format_func=lambda t: f"{t} · {by_turn[t].speaker}: {by_turn[t].text[:90]}",
    )
    accept_form(conversation, by_turn[turn_id])


def accept_form(conversation: Conversation, candidate: Candidate) -> None:
    turn_ids = [t.id for t in conversation.turns()]
    with st.form(f"accept_{candidate.turn_id}"):
        fact = st.text_area("Fact", value=candidate.text, help="What should be remembered.")
        probe = st.text_input(
            "Probe question",
            value=candidate.probe,
            help="Asked at the end of the replay; word it differently from the turn, as a "
            "user would ask, so recall is not string matching.",
        )
        left, right = st.columns(2)
        expect = left.radio(
            "Expect",
            EXPECTS,
            horizontal=True,
            help="recalled: the memory should bring the fact back; forgotten: it should no "
            "longer (superseded, retracted, or meant to fade).",
        )
        evidence = right.multiselect(
            "Evidence turns", turn_ids, default=[candidate.turn_id], help="The turns stating it."
        )
        if st.form_submit_button("Accept as key fact", type="primary"):
            try:
                marked = add_fact(
                    conversation, evidence=evidence, fact=fact, probe=probe, expect=str(expect)
                )
            except SessionFormatError as exc:
                show_problems(exc)
            else:
                start(marked, st.session_state[ORIGIN_KEY])
                st.session_state[FLASH_KEY] = f"Marked {marked.key_facts[-1].id}: {probe.strip()}"
                st.rerun()


def facts_panel(conversation: Conversation) -> list[dict[str, Any]]:
    """The key facts as edited in the table (applied on save)."""
    st.subheader("Key facts")
    rows = [{**r, "evidence": ", ".join(r["evidence"])} for r in fact_rows(conversation)]
    if not rows:
        st.caption("None yet: accept a candidate above.")
        return []
    edited = st.data_editor(
        rows,
        key=f"marking_facts_{st.session_state[VERSION_KEY]}",
        hide_index=True,
        width="stretch",
        num_rows="delete",
        disabled=["id", "evidence"],
        column_config={
            "id": st.column_config.TextColumn(width=60),
            "fact": st.column_config.TextColumn(width=330),
            "evidence": st.column_config.TextColumn(width=110),
            "probe": st.column_config.TextColumn(width=330),
            "expect": st.column_config.SelectboxColumn(
                options=list(EXPECTS), required=True, width=110
            ),
        },
    )
    st.caption("Edit a fact, its probe or expect in the table; select rows to delete them.")
    return [{**r, "evidence": [t.strip() for t in r["evidence"].split(",")]} for r in edited]


def save_panel(conversation: Conversation, facts: list[dict[str, Any]]) -> None:
    st.subheader("Save for tuning")
    target = conversations_dir() / f"{conversation.id}.json"
    blocked = denied(Action.WRITE)
    exists = target.exists()
    overwrite = exists and st.checkbox(
        f"Replace the existing {target.name}",
        value=st.session_state[ORIGIN_KEY] == OWN_PREFIX + conversation.id,
    )
    if st.button(
        "Save conversation",
        type="primary",
        disabled=blocked is not None,
        help=blocked
        or f"Writes {shown_path(target)} (listed as {OWN_PREFIX}{conversation.id} in A/B tuning).",
    ):
        try:
            final = with_facts(conversation, facts)
            path = save_conversation(final, overwrite=overwrite)
        except SessionFormatError as exc:
            show_problems(exc)
        except AtlasError as exc:
            st.error(f"Not saved: {exc}")
        else:
            start(final, OWN_PREFIX + conversation.id)
            st.success(
                f"Saved {len(final.key_facts)} key facts to {path.name}: pick "
                f"{OWN_PREFIX}{conversation.id} under Conversations in A/B tuning."
            )
            st.page_link("pages/ab_tuning.py", label="Open A/B tuning", icon=":material/tune:")


st.title("Mark key facts")
st.caption(
    "Open a conversation you imported (`atlas import recording|openai-chat|locomo ... --out "
    "data/conversations`) or upload one, accept the proposed key facts, word their probe "
    "questions and save: the A/B tuning page then replays it under any parameters and reports "
    "which facts each arm still recalls."
)
open_panel()
draft: Conversation | None = st.session_state.get(DRAFT_KEY)
if draft is not None:
    st.divider()
    summary(draft)
    flash = st.session_state.pop(FLASH_KEY, None)
    if flash:
        st.success(flash)
    candidates_panel(draft)
    edited_facts = facts_panel(draft)
    save_panel(draft, edited_facts)
