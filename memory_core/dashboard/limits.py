"""One validator per kind of value people type into a page, with the engine's limits.

A value typed on one page ends up in the engine, an A/B replay or a log: a probe becomes
a query, a session name a session id. So the limits are the engine's own
(``AtlasConfig.max_content_chars``, ``validate.session_id``), checked where the value is
typed, and every page uses the same function for the same kind of value. Messages name
the field, quote the value shortened (``boundary.excerpt``) and say what is allowed.
"""

from __future__ import annotations

from memory_core.boundary import excerpt
from memory_core.engine import validate
from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError


def max_text_chars() -> int:
    """The engine's longest memory text (``max_content_chars`` of the default config):
    every text that becomes a memory or a query must fit."""
    return int(AtlasConfig().max_content_chars)


def memory_text(value: object, field: str) -> str:
    """A text the engine stores or searches (a memory, a probe, a key fact), stripped.

    Raises:
        InputError: not a string, blank, or longer than ``max_content_chars``.
    """
    limit = max_text_chars()
    if not isinstance(value, str) or not value.strip():
        raise InputError(field, "must not be empty")
    text = value.strip()
    if len(text) > limit:
        raise InputError(
            field,
            f"has {len(text):,} characters; at most {limit:,} allowed (the engine's "
            f"max_content_chars); it starts {excerpt(text[:30])}",
        )
    return text


def note_text(value: object, field: str = "note") -> str | None:
    """An optional note kept in an audit trail (``None`` when blank); at most
    ``max_content_chars`` like every text the atlas keeps."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return memory_text(value, field)


def session_name(value: object, field: str = "session") -> str:
    """A session id typed in a page, stripped: the engine's one rule for session ids
    (``validate.NAME_RULE``), so every page accepts and refuses the same names."""
    text = value.strip() if isinstance(value, str) else value
    try:
        return validate.session_id(text, field)
    except InputError:
        raise InputError(
            field, f"{excerpt(text)} is not allowed; use {validate.NAME_RULE}"
        ) from None


def study_name(value: object, field: str = "study name") -> str:
    """An Optuna study name: the same rule as a session name (it is listed and logged the
    same way, and workers type it on a command line)."""
    return session_name(value, field)


def run_name(value: object, field: str = "run name") -> str:
    """A saved run's name: listed beside every other saved run, so the same rule again."""
    return session_name(value, field)
