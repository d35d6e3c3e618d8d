"""Reading ``atlas-snapshot/1`` files (one JSON ``meta`` member holding every per-memory
list, ``col_*`` columns, compressed), which databases still hold as recorded snapshots.

They are translated into the current ``Raw`` form and checked by the same rules.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from memory_core.engine.model import KIND_CODES, STATUS_CODES, Relation
from memory_core.engine.snapshot.layout import (
    CODE_COLUMNS,
    EDGE_COLUMNS,
    EMBEDDINGS,
    NODE_COLUMNS,
    Raw,
    Refusal,
)

FORMAT = "atlas-snapshot/1"
META = "meta"
_KEYS = ("ids", "session_of", "contents", "metadata", "provenance", "edges", "sessions")


def read(npz: Any) -> Raw:
    """Translate an open v1 archive (its columns held this version's codes)."""
    meta = json.loads(bytes(npz[META]).decode())
    if not isinstance(meta, dict) or any(key not in meta for key in _KEYS):
        missing = [k for k in _KEYS if not isinstance(meta, dict) or k not in meta]
        raise Refusal(f"lacks {', '.join(missing)}")
    if not isinstance(meta["ids"], list):
        raise Refusal(f"ids is {type(meta['ids']).__name__}; allowed: a list of ids")
    embeddings = npz[EMBEDDINGS]
    arrays = {name: npz[f"col_{name}"] for name in (*NODE_COLUMNS, "kind", "status")}
    arrays[EMBEDDINGS] = embeddings
    sessions = meta["sessions"]
    position = {info.get("id"): i for i, info in enumerate(sessions) if isinstance(info, dict)}
    try:
        session_dtype = CODE_COLUMNS["session"].dtype
        arrays["session"] = np.array([position[s] for s in meta["session_of"]], session_dtype)
        arrays.update(_edges(meta["edges"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise Refusal(f"holds malformed sessions or edges ({exc!r})") from exc
    header = {
        key: meta.get(key)
        for key in ("format", "config", "now", "last_decay", "counters", "rng", "sessions")
    }
    header.update(
        embedder=meta.get("embedder") or {"name": None, "dim": int(embeddings.shape[-1])},
        kinds=[k.value for k in KIND_CODES],
        statuses=[s.value for s in STATUS_CODES],
        relations=[r.value for r in Relation],
        count=len(meta["ids"]),
        graph=None,  # v1 stored no index structure
    )
    return Raw(header, arrays, meta["ids"], meta["contents"], meta["metadata"], meta["provenance"])


def _edges(rows: list[Any]) -> dict[str, np.ndarray]:
    """[source row, target row, relation name, strength] lists as the four edge columns."""
    codes = {r.value: i for i, r in enumerate(Relation)}
    source, target, relation, strength = zip(*rows, strict=True) if rows else ((), (), (), ())
    ends = (*source, *target)
    if not all(type(v) is int and 0 <= v < 2**31 for v in ends):
        raise ValueError("edge ends must be row numbers")
    if not all(type(v) in (int, float) for v in strength):
        raise ValueError("edge strengths must be numbers")
    dtype = {name: column.dtype for name, column in EDGE_COLUMNS.items()}
    return {
        "edge_source": np.array(source, dtype=dtype["edge_source"]),
        "edge_target": np.array(target, dtype=dtype["edge_target"]),
        "edge_relation": np.array([codes[r] for r in relation], dtype=dtype["edge_relation"]),
        "edge_strength": np.array(strength, dtype=dtype["edge_strength"]),
    }
