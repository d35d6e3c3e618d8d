"""Reading a snapshot: open the file, then check every field before anything is built.

Both layouts (``atlas-snapshot/2`` and the older ``/1``) are read into one ``Raw`` form
and checked by the same rules, so a restore never sees a value the writer could not
have produced. Every refusal is an ``InputError`` on field ``snapshot`` whose message
names the file, the member, the first bad row and its value, and what is allowed.
"""

from __future__ import annotations

import json
import math
import random
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory_core.engine.config import AtlasConfig
from memory_core.engine.graph import RELATIONS
from memory_core.engine.index.lexical import PostingColumns
from memory_core.engine.model import KIND_CODES, STATUS_CODES
from memory_core.engine.snapshot import hnsw, legacy, lexical, npy_member
from memory_core.engine.snapshot.layout import (
    CODE_COLUMNS,
    EDGE_COLUMNS,
    EMBEDDINGS,
    FORMAT,
    HEADER,
    HEADER_KEYS,
    NODE_COLUMNS,
    TEXT_COLUMNS,
    Column,
    Raw,
    Refusal,
    read_texts,
)
from memory_core.engine.snapshot.paused import collection_paused
from memory_core.engine.snapshot.sections import is_section
from memory_core.errors import ConfigError, InputError

_READ_ERRORS = (
    OSError,
    EOFError,
    KeyError,
    ValueError,
    TypeError,  # a plain .npy array instead of an .npz archive
    NotImplementedError,  # zipfile: a flipped compression-method byte
    zipfile.BadZipFile,
    zlib.error,
)


@dataclass(slots=True)
class SnapshotData:
    """A checked snapshot: codes are translated to this version's enums."""

    config: AtlasConfig
    header: dict[str, Any]
    columns: dict[str, np.ndarray]  # node columns, kind/status as this version's codes
    embeddings: np.ndarray
    edges: dict[str, np.ndarray]  # edge columns, relation as an index into RELATIONS
    graph: dict[str, np.ndarray] | None  # the HNSW graph's members (header["graph"] says how)
    postings: PostingColumns | None  # the BM25 postings by memory row, when stored and usable
    ids: list[str]
    contents: list[str]
    metadata: list[dict[str, Any] | None]
    provenance: list[tuple[str, ...]]


def read(path: Path) -> SnapshotData:
    """Open and check ``path``; ``InputError`` (field ``snapshot``) when it is unusable."""
    try:
        with collection_paused():
            return _check(_open(path))
    except Refusal as exc:
        raise InputError("snapshot", f"{path}: {exc}") from None
    except (*_READ_ERRORS, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError("snapshot", f"{path} is not an atlas snapshot ({exc})") from exc


def _open(path: Path) -> Raw:
    # our own handle: np.load leaks the file it opened when the zip is invalid
    with path.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        if legacy.META in npz.files:
            return legacy.read(npz)
        arrays = {name: npy_member.read(npz, name) for name in npz.files if not is_section(name)}
    header = _json(arrays, HEADER)
    texts = {name: read_texts(arrays, name) for name in TEXT_COLUMNS}
    return Raw(
        header,
        arrays,
        texts["ids"],
        texts["contents"],
        _json(arrays, "metadata_json"),
        _json(arrays, "provenance_json"),
    )


def _member(arrays: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in arrays:
        raise Refusal(f"lacks the member {name!r}")
    return arrays[name]


def _json(arrays: dict[str, np.ndarray], name: str) -> Any:
    data = _member(arrays, name)
    if data.dtype != np.uint8 or data.ndim != 1:
        raise Refusal(f"{name} must be utf-8 JSON bytes, got {data.dtype} of shape {data.shape}")
    return json.loads(data.tobytes())


def _check(raw: Raw) -> SnapshotData:
    header = raw.header
    if not isinstance(header, dict):
        raise Refusal(f"its header must be a JSON object, got {type(header).__name__}")
    missing = HEADER_KEYS - header.keys()
    if missing:
        raise Refusal(f"lacks {', '.join(sorted(missing))}")
    if header["format"] != FORMAT and header["format"] != legacy.FORMAT:
        raise Refusal(
            f"has format {header['format']!r}; this version reads {FORMAT} and {legacy.FORMAT}"
        )
    try:
        config = AtlasConfig.from_mapping(header["config"])
    except (ConfigError, AttributeError, TypeError) as exc:
        raise Refusal(f"holds an invalid config: {exc}") from exc
    _check_header(header)
    n = header["count"]
    arrays = raw.arrays
    columns = {name: _column(arrays, name, rule, n) for name, rule in NODE_COLUMNS.items()}
    for name, rule in CODE_COLUMNS.items():
        columns[name] = _column(arrays, name, rule, n)
    columns["kind"] = _codes(columns["kind"], "kind", header["kinds"], KIND_CODES)
    columns["status"] = _codes(columns["status"], "status", header["statuses"], STATUS_CODES)
    _bounded(columns["session"], "session", len(header["sessions"]))
    m = len(_member(arrays, "edge_source"))
    edges = {name: _column(arrays, name, rule, m) for name, rule in EDGE_COLUMNS.items()}
    edges["edge_relation"] = _codes(
        edges["edge_relation"], "edge_relation", header["relations"], RELATIONS
    )
    for end in ("edge_source", "edge_target"):
        _bounded(edges[end], end, n)
    loops = np.flatnonzero(edges["edge_source"] == edges["edge_target"])
    if len(loops):
        raise Refusal(
            f"edge row {loops[0]} links memory row {edges['edge_source'][loops[0]]} to itself"
        )
    embeddings = _member(arrays, EMBEDDINGS)
    dim = header["embedder"]["dim"]
    if embeddings.dtype != np.float32 or embeddings.shape != (n, dim):
        raise Refusal(
            f"embeddings must be float32 of shape ({n}, {dim}), "
            f"got {embeddings.dtype} of shape {embeddings.shape}"
        )
    # NaN and inf show in the extremes: two passes with no 38 MB mask per 100k memories
    if embeddings.size and not (np.isfinite(embeddings.min()) and np.isfinite(embeddings.max())):
        row = int(np.flatnonzero(~np.isfinite(embeddings).all(axis=1))[0])
        raise Refusal(f"embeddings row {row} holds NaN or inf; allowed: finite numbers")
    graph = None
    if header.setdefault("graph", None) is not None:
        hnsw.check(header["graph"], arrays, n, dim, config.hnsw_m)
        graph = {name: arrays[name] for name in hnsw.WRITTEN if name in arrays}
    postings = lexical.check(header.setdefault("lexical", None), arrays, n)
    return SnapshotData(
        config,
        header,
        columns,
        embeddings,
        edges,
        graph,
        postings,
        _strings(raw.ids, "ids", n, unique=True),
        _strings(raw.contents, "contents", n),
        _metadata(raw.metadata, n),
        _provenance(raw.provenance, n),
    )


def _check_header(header: dict[str, Any]) -> None:
    embedder = header["embedder"]
    if not (
        isinstance(embedder, dict)
        and (embedder.get("name") is None or isinstance(embedder["name"], str))
        and _is_int(embedder.get("dim"))
        and embedder["dim"] > 0
    ):
        raise Refusal(f"embedder is {embedder!r}; allowed: {{'name': str or null, 'dim': int > 0}}")
    for key in ("now", "last_decay"):
        if not _is_number(header[key]) or not math.isfinite(header[key]):
            raise Refusal(f"{key} is {header[key]!r}; allowed: a finite number")
    if not _is_int(header["count"]) or header["count"] < 0:
        raise Refusal(f"count is {header['count']!r}; allowed: an int >= 0")
    counters = header["counters"]
    if not isinstance(counters, dict) or not all(_is_int(v) and v >= 0 for v in counters.values()):
        raise Refusal(f"counters is {counters!r}; allowed: an object of ints >= 0")
    try:
        version, internal, gauss = header["rng"]
        random.Random().setstate((version, tuple(internal), gauss))
    except (TypeError, ValueError, OverflowError) as exc:
        raise Refusal(f"rng is not a random generator state ({exc})") from exc
    for key in ("kinds", "statuses", "relations"):
        if not isinstance(header[key], list) or not all(isinstance(v, str) for v in header[key]):
            raise Refusal(f"{key} is {header[key]!r}; allowed: a list of names")
    sessions = header["sessions"]
    if not isinstance(sessions, list):
        raise Refusal(f"sessions is {type(sessions).__name__}; allowed: a list")
    seen: set[str] = set()
    for i, info in enumerate(sessions):
        ok = (
            isinstance(info, dict)
            and isinstance(info.get("id"), str)
            and info["id"]
            and info["id"] not in seen
            and isinstance(info.get("ended"), bool)
            and (info.get("last_id") is None or isinstance(info["last_id"], str))
            and isinstance(info.get("working"), list)
            and all(isinstance(w, str) for w in info["working"])
            and _is_number(info.get("created_at"))
            and math.isfinite(info["created_at"])
        )
        if not ok:
            raise Refusal(
                f"sessions[{i}] is {info!r}; allowed: a unique non-empty 'id', a bool "
                "'ended', 'last_id' str or null, 'working' list of ids, finite 'created_at'"
            )
        seen.add(info["id"])


def _column(arrays: dict[str, np.ndarray], name: str, rule: Column, n: int) -> np.ndarray:
    values = _member(arrays, name)
    if values.dtype != rule.dtype or values.shape != (n,):
        raise Refusal(
            f"{name} must be {rule.dtype} of shape ({n},), got {values.dtype} of shape {values.shape}"
        )
    if rule.ok is not None:
        bad = np.flatnonzero(~rule.ok(values))
        if len(bad):
            raise Refusal(
                f"{name} row {bad[0]} is {values[bad[0]].item()!r}; allowed: {rule.allowed}"
            )
    return values


def _bounded(values: np.ndarray, name: str, size: int) -> None:
    bad = np.flatnonzero((values < 0) | (values >= size))
    if len(bad):
        raise Refusal(f"{name} row {bad[0]} is {values[bad[0]].item()}; allowed: 0 to {size - 1}")


def _codes(values: np.ndarray, name: str, names: list[str], enum: tuple[Any, ...]) -> np.ndarray:
    """Translate the file's codes (indexes into its ``names``) to indexes into ``enum``."""
    allowed = [e.value for e in enum]
    unknown = [v for v in names if v not in allowed]
    if unknown:
        raise Refusal(f"{name} names {unknown[0]!r}; allowed: {', '.join(allowed)}")
    _bounded(values, name, len(names))
    lookup = np.array([allowed.index(v) for v in names], dtype=values.dtype)
    return lookup[values] if len(lookup) else values


def _strings(values: Any, name: str, n: int, *, unique: bool = False) -> list[str]:
    _length(values, name, n)
    for i, value in enumerate(values):
        if type(value) is not str or not value:
            raise Refusal(f"{name} row {i} is {value!r}; allowed: a non-empty string")
    if unique and len(set(values)) != n:
        seen: set[str] = set()
        row = next(i for i, v in enumerate(values) if v in seen or seen.add(v))  # type: ignore[func-returns-value]
        raise Refusal(f"{name} row {row} repeats {values[row]!r}; allowed: unique ids")
    return list(values)


def _metadata(values: Any, n: int) -> list[dict[str, Any] | None]:
    _length(values, "metadata", n)
    for i, value in enumerate(values):
        if value is not None and type(value) is not dict:
            raise Refusal(f"metadata row {i} is {value!r}; allowed: an object or null")
    return list(values)


def _provenance(values: Any, n: int) -> list[tuple[str, ...]]:
    _length(values, "provenance", n)
    out = []
    for i, value in enumerate(values):
        if type(value) is not list or not all(type(v) is str and v for v in value):
            raise Refusal(f"provenance row {i} is {value!r}; allowed: a list of non-empty strings")
        out.append(tuple(value))
    return out


def _length(values: Any, name: str, n: int) -> None:
    if not isinstance(values, list) or len(values) != n:
        size = len(values) if isinstance(values, list) else type(values).__name__
        raise Refusal(f"{name} holds {size} entries; allowed: one per memory ({n}, from count)")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
