"""The Streamlit-only part of the dashboard: the app shell, sidebar, shared session state and panels.

Everything else in ``memory_core.dashboard`` is plain logic that tests drive without Streamlit.
"""
