"""Persistent embedding cache keyed by (model, sha256(text)).

Re-running a conversation under new parameters then costs only the replay: texts are
embedded once per model, ever. Memory layer in front, SQLite file behind (stdlib sqlite3:
it is a cache, not part of the audited store).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory_core.embedding.base import Embedder, embed_checked


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors by (model, text hash); ``path=None`` keeps it in memory only."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self._memory: dict[tuple[str, str], np.ndarray] = {}
        self._db: sqlite3.Connection | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA secure_delete=ON")  # forgotten rows are zeroed on disk
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS embedding (model TEXT, key TEXT, vector BLOB,"
                " PRIMARY KEY (model, key))"
            )
            self._db.commit()

    def __len__(self) -> int:
        return len(self._memory)

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        missing = []
        with self._lock:
            for key in keys:
                vec = self._memory.get((model, key))
                if vec is None:
                    missing.append(key)
                else:
                    found[key] = vec
            if missing and self._db is not None:
                for start in range(0, len(missing), 500):
                    chunk = missing[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        f"SELECT key, vector FROM embedding WHERE model=? AND key IN ({marks})",
                        [model, *chunk],
                    ).fetchall()
                    for key, blob in rows:
                        vec = np.frombuffer(blob, dtype=np.float32).copy()
                        self._memory[(model, key)] = vec
                        found[key] = vec
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self._lock:
            for key, vec in items.items():
                self._memory[(model, key)] = vec
            if self._db is not None and items:
                self._db.executemany(
                    "INSERT OR REPLACE INTO embedding VALUES (?, ?, ?)",
                    [
                        (model, k, np.asarray(v, dtype=np.float32).tobytes())
                        for k, v in items.items()
                    ],
                )
                self._db.commit()

    def forget(self, model: str, texts: Sequence[str]) -> None:
        """Drop cached vectors of these texts (privacy: a purged session leaves no trace)."""
        keys = [text_key(t) for t in texts]
        with self._lock:
            for key in keys:
                self._memory.pop((model, key), None)
            if self._db is not None and keys:
                self._db.executemany(
                    "DELETE FROM embedding WHERE model=? AND key=?", [(model, k) for k in keys]
                )
                self._db.commit()
                # the WAL still holds the pages as they were before: fold it in and empty it
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def contains(self, model: str, text: str) -> bool:
        return bool(self.get_many(model, [text_key(text)]))


class CachedEmbedder:
    """Wraps an embedder; only texts never seen before reach the model (deduplicated)."""

    __slots__ = ("cache", "inner")

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None = None) -> None:
        self.inner = inner
        self.cache = cache if cache is not None else EmbeddingCache()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.name, keys)
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            fresh = embed_checked(self.inner, list(todo.values()))
            new = dict(zip(todo.keys(), fresh, strict=True))
            self.cache.put_many(self.name, new)
            found.update(new)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out

    def forget(self, texts: Sequence[str]) -> None:
        self.cache.forget(self.name, texts)
