"""Who is using this browser session, and whether they may press a given button.

Pages ask ``denied(action)`` for a reason to disable a mutating widget (``None`` when
allowed); the sidebar's ``identity_panel`` shows the login form when a users file is in
force, and a banner in read-only mode. The logged-in identity lives in this browser
session's state only, so two sessions never share a login.
"""

from __future__ import annotations

import streamlit as st

from memory_core.access import (
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
