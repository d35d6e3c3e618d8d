"""Knowledge audit: placeholder until the knowledge-tier issue lands."""

import streamlit as st

st.title("Knowledge audit")
st.info(
    "Coming with the knowledge-tier issue: the long-term knowledge items with their versions, "
    "sources and validity dates; what the ingestion gate rejected and why; and feedback on "
    "items agents retrieved."
)
