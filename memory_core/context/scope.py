"""Which task context graph a turn belongs to: its user's, or its session's alone.

The seed's node ids hash user + day + key, so a user's goals and constraints carry across
that user's sessions: turns that name their user (``user_id`` metadata) share one graph.
A turn that names no user belongs to its session alone, the rule the conflict guard keeps
for memories (issue #29): sessions that share no user never change each other's graph.
A graph is named by its scope key, ``user:<id>`` or ``session:<id>``; the key is what the
agent, the snapshot section and the stored tables name it by.
"""

from __future__ import annotations

USER_SCOPE = "user:"
SESSION_SCOPE = "session:"


def scope_key(session_id: str, user: str | None) -> str:
    """The graph a turn of ``session_id`` goes into: ``user``'s when named, else the session's."""
    return f"{USER_SCOPE}{user}" if user else f"{SESSION_SCOPE}{session_id}"


def scope_owner(scope: str) -> str:
    """The id a scope's node ids are hashed with: the user's, or the session's without one."""
    return scope.removeprefix(USER_SCOPE).removeprefix(SESSION_SCOPE)


def scope_user(scope: str) -> str | None:
    """The user a scope key names (None for a session's own graph)."""
    return scope.removeprefix(USER_SCOPE) if scope.startswith(USER_SCOPE) else None
