"""Who is using this browser session, and whether they may press a given button.

Pages ask ``denied(action)`` for a reason to disable a mutating widget (``None`` when
allowed); the sidebar's ``identity_panel`` shows the login form when a users file is in
force, and a banner in read-only mode. The logged-in identity lives in this browser
session's state only, so two sessions never share a login.
"""

from __future__ import annotations

import streamlit as st

from memory_core.dashboard.access import (
    Action,
    Identity,
    authenticate,
    denial,
    read_only,
    roles_enabled,
    visitor,
)
from memory_core.errors import AccessDeniedError, AtlasError

IDENTITY_KEY = "access_identity"
REVIEWER_KEY = "reviewer"
"""The sidebar's reviewer name, one for both review pages."""
_REVIEWER_KEPT = "reviewer_kept"  # outlives the widget while a page without it is open
LOGIN_NAME = "access_login_name"
LOGIN_PASSWORD = "access_login_password"


def current_identity(typed_name: str | None = None) -> Identity:
    """The logged-in identity, else a visitor under ``typed_name`` (see ``access.visitor``)."""
    logged_in = st.session_state.get(IDENTITY_KEY)
    if isinstance(logged_in, Identity) and roles_enabled():
        return logged_in
    try:
        return visitor(typed_name)
    except AtlasError:  # a name the rules refuse is no name at all
        return visitor(None)


def denied(action: Action, typed_name: str | None = None) -> str | None:
    """Why the current identity may not perform ``action`` now, or ``None``."""
    return denial(current_identity(typed_name), action)


def reviewer_identity() -> Identity:
    """Draw the reviewer field in the sidebar and return who acts on this page.

    Both review pages call this, so the name typed on one is the name on the other,
    also after visiting pages without the field. Signed in, the account's name counts,
    whatever is typed.
    """
    with st.sidebar:
        st.divider()
        st.text_input(
            "Reviewer",
            value=str(st.session_state.get(_REVIEWER_KEPT, "")),
            key=REVIEWER_KEY,
            on_change=_keep_reviewer,
            placeholder="your name (recorded with each review)",
            help="Every review action is recorded under this name in the audit trail.",
        )
    return current_identity(str(st.session_state.get(REVIEWER_KEY, "")))


def _keep_reviewer() -> None:
    st.session_state[_REVIEWER_KEPT] = st.session_state.get(REVIEWER_KEY, "")


def identity_panel() -> None:
    """Sidebar block: read-only banner, and login/logout when roles are configured."""
    if read_only():
        st.info("Read-only demo: every action that changes data is disabled.")
    if not roles_enabled():
        return
    who = current_identity()
    if who.authenticated:
        st.caption(f"Signed in as **{who.name}** ({who.role.value})")
        if st.button("Sign out", key="access_sign_out"):
            st.session_state.pop(IDENTITY_KEY, None)
            st.rerun()
        return
    with st.form("access_login"):
        st.caption("Sign in to review or change data (viewers can only look).")
        name = st.text_input("User", key=LOGIN_NAME)
        password = st.text_input("Password", type="password", key=LOGIN_PASSWORD)
        if st.form_submit_button("Sign in"):
            try:
                st.session_state[IDENTITY_KEY] = authenticate(name, password)
            except AccessDeniedError:
                st.error("Unknown user or wrong password.")
            else:
                st.rerun()
