"""Everything the Streamlit pages compute, testable without a browser.

Pages under ``pages/`` only read state, call these functions and render the result. Streamlit itself
is imported by the ``ui`` sub-package only (app shell, sidebar, cached live system, panels).
"""
