"""Every page runs inside app.py's navigation shell, deep links included."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

_switched = False


def require_app_shell() -> None:
    """Re-run through app.py when Streamlit started this page on its own.

    With a ``pages/`` folder beside ``app.py``, a freshly started Streamlit runs a
    deep-linked page (``/ab_tuning``) directly, in its legacy folder mode, until some
    session has run ``app.py``'s ``st.navigation``. The first visitor after a restart
    would get the page without the shell: no wide layout, no atlas source picker, a
    sidebar listing file names. Switching the process to ``st.navigation`` mode and
    re-running makes Streamlit execute ``app.py``, which resolves the same URL.

    Once per process: a server never returns to folder mode by itself; only Streamlit's
    AppTest resets the flag on every run, and re-running there each time would drop the
    click or chat message that started the run.
    """
    global _switched
    if PagesManager.uses_pages_directory and not _switched:
        _switched = True
        PagesManager.uses_pages_directory = False
        st.rerun()
