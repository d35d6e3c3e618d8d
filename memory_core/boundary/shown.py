"""How a value from outside appears in a message: short, and without secrets.

Error messages go to pages, logs and saved runs. A message that repeats a 1 MB field is
unreadable and a message that repeats a database password leaks it, so every message
that quotes input quotes it through ``excerpt``, and every URL or text that may hold a
URL goes through ``mask_secrets``.
"""

from __future__ import annotations

import re

EXCERPT_CHARS = 60
"""Longest quote of an input value in a message (the length is said beside it)."""
MASK = "***"
# scheme://user:password@host — the password is everything between the first ':' after
# the user and the last '@' before the host (passwords may contain '@' and ':').
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'\"]*:)(?P<secret>[^\s'\"]*)(?P<at>@)"
)
_KEY_VALUE_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<secret>[^\s&;'\"]+)", re.I)


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``value`` quoted for a message: its ``repr`` (control and invisible characters
    escaped) cut to about ``limit`` characters, with the full length when it was cut."""
    text = value if isinstance(value, str) else repr(value)
    quoted = repr(text)
    if len(quoted) <= limit + 2:
        return quoted
    return f"{quoted[: max(limit, 2)]}…{quoted[0]} ({len(text):,} characters)"


def mask_secrets(text: str) -> str:
    """``text`` with the password of every URL (``scheme://user:pw@host``) and every
    ``password=...`` setting replaced by ``***``."""
    masked = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}{m['at']}", text)
    return _KEY_VALUE_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", masked)
