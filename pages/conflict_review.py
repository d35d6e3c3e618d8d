"""Conflict review: placeholder until the conflict-judge issue lands."""

import streamlit as st

st.title("Conflict review")
st.info(
    "Coming with the conflict-judge issue: pairs of memories the judge flags as contradicting "
    "or superseding each other, with its reasons; a reviewer approves (the older memory is "
    "deprecated or superseded) or rejects. Actions are idempotent and audited."
)
