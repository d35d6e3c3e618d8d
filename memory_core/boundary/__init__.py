"""The boundary with the outside: reading files people hand in, and quoting input in messages.

A part of its own so every other part can use it (the dashboard's uploads, the knowledge
importer, the sweep's storage errors); it imports nothing of ``memory_core`` but the
errors.
"""

from memory_core.boundary.files import (
    MAX_DEPTH,
    FileLimits,
    checked_bytes,
    csv_rows,
    decoded_text,
    json_depth,
    json_rows,
    json_value,
    longest_string,
    strict_json,
)
from memory_core.boundary.shown import EXCERPT_CHARS, excerpt, mask_secrets

__all__ = [
    "EXCERPT_CHARS",
    "MAX_DEPTH",
    "FileLimits",
    "checked_bytes",
    "csv_rows",
    "decoded_text",
    "excerpt",
    "json_depth",
    "json_rows",
    "json_value",
    "longest_string",
    "mask_secrets",
    "strict_json",
]
