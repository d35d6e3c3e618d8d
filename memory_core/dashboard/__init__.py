"""Everything the Streamlit pages compute, testable without a browser.

Pages under ``pages/`` only read state, call these functions and render the result.
Streamlit itself is imported by ``shared`` (the cached live system) and ``state`` (the
session-state wrapper) only.
"""
