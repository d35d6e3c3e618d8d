"""Checks at the public boundary: every failure names the argument and what is allowed,
and happens before any state changes."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

from memory_core.engine.model import MemoryKind, MemoryStatus, Relation
from memory_core.errors import InputError

MAX_SESSION_ID = 200
_JSON_ATOMS = frozenset({str, int, float, bool})
"""Exact types ``json.dumps`` always writes (a float only when finite)."""


def content(text: object, max_chars: int, field: str = "content") -> str:
    if not isinstance(text, str):
        raise InputError(field, f"must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError(field, "must not be empty or whitespace")
    if len(text) > max_chars:
        raise InputError(field, f"has {len(text)} characters; max_content_chars allows {max_chars}")
    return text


NAME_RULE = f"1 to {MAX_SESSION_ID} printable characters, not blank, without < or >"
"""What a session id (and any name people type for one) may be: it is listed in pages,
filters and logs, so no control or direction characters and nothing that reads as markup."""


def session_id(value: object, field: str = "session_id") -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(field, f"must be {NAME_RULE}")
    if len(value) > MAX_SESSION_ID or not value.isprintable() or "<" in value or ">" in value:
        raise InputError(field, f"has {len(value)} characters; must be {NAME_RULE}")
    return value


def unit_interval(value: object, field: str) -> float:
    number = finite(value, field)
    if not 0.0 <= number <= 1.0:
        raise InputError(field, f"must be in [0, 1], got {number}")
    return number


def finite(value: object, field: str, *, low: float | None = None) -> float:
    # numbers.Real also admits numpy scalars, which agents computing scores pass around
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(field, f"must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(field, f"must be finite, got {value!r}")
    if low is not None and number < low:
        raise InputError(field, f"must be >= {low}, got {number}")
    return number


def in_range(value: object, field: str, low: float, high: float) -> float:
    number = finite(value, field)
    if not low <= number <= high:
        raise InputError(field, f"must be in [{low:g}, {high:g}], got {value!r}")
    return number


def is_count(value: object) -> bool:
    """Whether ``value`` is a plain ``int`` >= 1 (``True`` is not a count): the test each
    caller words its own error around (a config field, an argument, an index setting)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def positive_int(value: object, field: str, *, high: int = 10_000) -> int:
    number = int(value) if isinstance(value, numbers.Integral) else None
    if isinstance(value, bool) or number is None or not 1 <= number <= high:
        raise InputError(field, f"must be an integer in [1, {high}], got {value!r}")
    return number


def kind(value: object, field: str = "kind") -> MemoryKind:
    try:
        return MemoryKind(value)  # type: ignore[arg-type]  # invalid values raise ValueError below
    except ValueError:
        raise InputError(field, f"must be one of {', '.join(MemoryKind)}, got {value!r}") from None


def status(value: object, field: str = "status") -> MemoryStatus:
    try:
        return MemoryStatus(value)  # type: ignore[arg-type]  # invalid values raise ValueError below
    except ValueError:
        raise InputError(
            field, f"must be one of {', '.join(MemoryStatus)}, got {value!r}"
        ) from None


def relation(value: object, field: str = "relation") -> Relation:
    try:
        return Relation(value)  # type: ignore[arg-type]  # invalid values raise ValueError below
    except ValueError:
        raise InputError(field, f"must be one of {', '.join(Relation)}, got {value!r}") from None


def metadata(value: object, field: str = "metadata") -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InputError(field, "must be a mapping with string keys")
    if all(type(v) in _JSON_ATOMS or v is None for v in value.values()) and all(
        math.isfinite(v) for v in value.values() if type(v) is float
    ):
        return dict(value)  # flat strings, ints, finite floats: json.dumps cannot fail
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(field, f"must be JSON-serialisable ({exc})") from exc
    return dict(value)


def hints(value: object, field: str = "hints") -> dict[str, float]:
    """``{memory id: score >= 0}`` (a retrieval's caller-given candidates)."""
    if not isinstance(value, Mapping):
        raise InputError(field, f"must be a mapping of memory id to score, got {value!r}")
    out = {}
    for key, score in value.items():
        if not isinstance(key, str):
            raise InputError(field, f"keys must be memory ids (strings), got {key!r}")
        out[key] = finite(score, f"{field}[{key!r}]", low=0.0)
    return out


def string_tuple(values: Iterable[object] | None, field: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        raise InputError(field, "must be a list of strings, not a single string")
    out = tuple(values)
    strings = tuple(v for v in out if isinstance(v, str) and v)
    if len(strings) != len(out):
        raise InputError(field, "must contain only non-empty strings")
    return strings
