"""The one reader for files from outside: limits first, then decoding, then shape.

Every upload and import passes the same gates in the same order, each cheap before the
next is tried: the byte size; binary content (a NUL byte) and the encoding (UTF-8, a
UTF-16 file named as such); for JSON the nesting depth, found by a scan over the text
before any parser recurses (a 10,000-level file must not reach ``json.loads``); then
decoding; then every string's length and the number of rows. Schema and domain checks
belong to the callers and run on what passes. A refusal is an ``UploadError`` naming the
file, where in it, and the limit, and quoting at most an ``excerpt`` of the input.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory_core.boundary.shown import excerpt
from memory_core.errors import UploadError

MAX_DEPTH = 64
"""Deepest JSON nesting any of our formats needs is under 10; 64 leaves room."""
_BOMS = {b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16", b"\xff\xfe\x00\x00": "UTF-32"}


@dataclass(frozen=True, slots=True, kw_only=True)
class FileLimits:
    """What one kind of file may be. ``max_field_chars`` caps every string in it (a JSON
    string, a CSV cell); ``max_rows`` the items of a row file (``None``: no cap)."""

    max_bytes: int
    max_depth: int = MAX_DEPTH
    max_field_chars: int = 100_000
    max_rows: int | None = None

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_depth < 1 or self.max_field_chars < 1:
            raise ValueError("file limits must be positive")


def checked_bytes(name: str, data: bytes, limits: FileLimits) -> bytes:
    """``data`` if it is not empty and within ``limits.max_bytes`` (binary files stop here)."""
    if not data:
        raise UploadError(name, "file", "is empty (0 bytes)")
    if len(data) > limits.max_bytes:
        raise UploadError(
            name,
            "file",
            f"is {len(data):,} bytes; at most {limits.max_bytes:,} bytes are allowed",
        )
    return data


def decoded_text(name: str, data: bytes, limits: FileLimits) -> str:
    """The file as UTF-8 text (a BOM dropped), after the size check.

    Raises:
        UploadError: empty, too large, binary (a NUL byte), UTF-16/32, or a byte that is
            not UTF-8 (its line and offset named).
    """
    checked_bytes(name, data, limits)
    for bom, encoding in sorted(_BOMS.items(), key=lambda kv: -len(kv[0])):
        if data.startswith(bom):
            raise UploadError(name, "encoding", f"is {encoding} text; save it as UTF-8")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise UploadError(
            name, "encoding", f"is binary (a NUL byte at offset {nul:,}); expected UTF-8 text"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UploadError(
            name,
            "encoding",
            f"line {line}: byte 0x{data[exc.start]:02x} at offset {exc.start:,} is not UTF-8; "
            "save the file as UTF-8",
        ) from None
    if not text.strip():
        raise UploadError(name, "file", "holds only whitespace")
    return text


def json_depth(text: str) -> int:
    """How deeply ``text``'s arrays and objects nest, without parsing it.

    Vectorised over the UTF-8 bytes (no multi-byte character contains an ASCII byte): a
    quote is real unless an odd run of backslashes precedes it; brackets count where an
    even number of real quotes came before. A file of megabytes costs milliseconds and
    no recursion.
    """
    codes = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    if not codes.size:
        return 0
    positions = np.arange(codes.size)
    backslash = codes == ord("\\")
    last_other = np.maximum.accumulate(np.where(backslash, -1, positions))
    run_before = np.zeros(codes.size, dtype=np.int64)
    run_before[1:] = positions[:-1] - last_other[:-1]  # backslashes right before each byte
    quotes = (codes == ord('"')) & (run_before % 2 == 0)
    outside = np.cumsum(quotes) % 2 == 0
    steps = np.zeros(codes.size, dtype=np.int32)
    steps[((codes == ord("[")) | (codes == ord("{"))) & outside] = 1
    steps[((codes == ord("]")) | (codes == ord("}"))) & outside] = -1
    return int(np.cumsum(steps).max(initial=0))


def json_value(name: str, data: bytes, limits: FileLimits) -> Any:
    """The decoded JSON of an uploaded file, every limit checked before and after parsing.

    Raises:
        UploadError: a limit (size, encoding, depth, a string's length) or invalid JSON
            (its line and column); duplicate keys and ``NaN`` are invalid too.
    """
    text = decoded_text(name, data, limits)
    value = strict_json(name, text, max_depth=limits.max_depth)
    long = longest_string(value, limits.max_field_chars)
    if long is not None:
        path, size = long
        raise UploadError(
            name, path, f"has {size:,} characters; at most {limits.max_field_chars:,} allowed"
        )
    return value


def strict_json(name: str, text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``text`` parsed as strict JSON: nesting checked first, no duplicate keys (one value
    would be lost), no ``NaN``/``Infinity``.

    Raises:
        UploadError: nested deeper than ``max_depth``, or invalid JSON (its line and column).
    """
    depth = json_depth(text)
    if depth > max_depth:
        raise UploadError(
            name, "$", f"JSON nests {depth:,} levels deep; at most {max_depth} allowed"
        )
    duplicates: list[str] = []

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                duplicates.append(key)
            obj[key] = value
        return obj

    def no_constant(word: str) -> Any:
        raise ValueError(f"{word} is not allowed in JSON")

    try:
        value = json.loads(text, object_pairs_hook=unique, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        near = excerpt(text[exc.pos : exc.pos + 30], 30)
        raise UploadError(
            name, f"line {exc.lineno}", f"column {exc.colno}: invalid JSON ({exc.msg}) near {near}"
        ) from None
    except (ValueError, RecursionError) as exc:  # NaN, 5,000-digit integers
        raise UploadError(name, "$", f"invalid JSON: {excerpt(str(exc), 120)}") from None
    if duplicates:
        raise UploadError(name, "$", f"duplicate JSON key {excerpt(duplicates[0])}")
    return value


def longest_string(value: Any, limit: int) -> tuple[str, int] | None:
    """The JSON path and length of the first string (or key) longer than ``limit``, or None.

    Walks with an explicit stack: the depth was checked, but this must not recurse either.
    """
    stack: list[tuple[str, Any]] = [("$", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if len(item) > limit:
                return path, len(item)
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                if len(key) > limit:
                    return f"{path} (a key)", len(key)
                stack.append((f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]", child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def json_rows(name: str, data: bytes, limits: FileLimits, *, wrapper: str) -> list[Any]:
    """A JSON file that is a list of rows or ``{wrapper: [...]}``, within ``max_rows``."""
    value = json_value(name, data, limits)
    rows = value.get(wrapper) if isinstance(value, dict) else value
    if not isinstance(rows, list):
        raise UploadError(
            name, "$", f'must be a list of items or {{"{wrapper}": [...]}}, got {_kind(value)}'
        )
    _check_rows(name, len(rows), limits)
    return rows


def csv_rows(
    name: str, data: bytes, limits: FileLimits, *, columns: Sequence[str]
) -> list[dict[str, str | None]]:
    """A CSV file with a header row naming only ``columns``; rows as dicts.

    Raises:
        UploadError: a limit, no header, unknown columns, an unterminated quoted field
            (the line it opened on), a cell over ``max_field_chars``.
    """
    header_help = f"expected a header row with columns from: {', '.join(columns)}"
    if not data.strip(b"\xef\xbb\xbf \t\r\n"):
        raise UploadError(name, "file", f"is empty: {header_help}")
    text = decoded_text(name, data, limits)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[list[str]] = []
    starts: list[int] = []
    saved = csv.field_size_limit(limits.max_field_chars)
    try:
        while True:
            start = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise UploadError(name, f"line {start}", _csv_problem(str(exc), limits)) from None
            if row:
                rows.append(row)
                starts.append(start)
    finally:
        csv.field_size_limit(saved)
    if not rows:
        raise UploadError(name, "file", f"is empty: {header_help}")
    header = [h.strip() for h in rows[0]]
    unknown = [h for h in header if h not in columns]
    if unknown or not any(header):
        shown = ", ".join(excerpt(h, 30) for h in unknown[:5]) or "none"
        raise UploadError(name, "columns", f"unknown {shown}; {header_help}")
    _check_rows(name, len(rows) - 1, limits)
    out: list[dict[str, str | None]] = []
    for line, row in zip(starts[1:], rows[1:], strict=True):
        if len(row) > len(header):
            raise UploadError(
                name, f"line {line}", f"has {len(row)} cells; the header has {len(header)}"
            )
        out.append({h: (row[i] if i < len(row) else None) for i, h in enumerate(header)})
    return out


def _csv_problem(message: str, limits: FileLimits) -> str:
    if "field larger than field limit" in message:
        return f"a cell is longer than {limits.max_field_chars:,} characters"
    if "unexpected end of data" in message or "EOF" in message:
        return 'unterminated quoted field (a " opened here is never closed)'
    return f"not valid CSV ({excerpt(message, 80)})"


def _check_rows(name: str, count: int, limits: FileLimits) -> None:
    if limits.max_rows is not None and count > limits.max_rows:
        raise UploadError(
            name, "rows", f"has {count:,} rows; at most {limits.max_rows:,} allowed per file"
        )


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)
