"""Long-term retrieval: filter first, then vector search, then confidence and source weight.

The seed's lesson: pure similarity mixes expired policies into answers; the validity
window and status are SQL filters, the similarity is one matrix product over the
survivors, and the final score is ``similarity x confidence x source weight``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session

from memory_core.embedding.base import Embedder, check_vectors, embed_checked
from memory_core.engine.clock import Clock, to_datetime
from memory_core.errors import InputError
from memory_core.knowledge.items import ItemStatus, KnowledgeItem, SourceKind
from memory_core.knowledge.models import KnowledgeItemRow
from memory_core.knowledge.settings import KnowledgeSettings

_FETCH_CHUNK = 500
SessionScope = Callable[[str], AbstractContextManager[Session]]


@dataclass(frozen=True, slots=True)
class KnowledgeFilter:
    """Which items may answer: sources, kinds, one version, keys (``None`` = any)."""

    sources: frozenset[str] | None = None
    kinds: frozenset[SourceKind] | None = None
    version: str | None = None
    keys: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    """One answer from the long-term tier with the reason it ranked where it did."""

    item: KnowledgeItem
    similarity: float
    source_weight: float
    score: float

    @property
    def explanation(self) -> str:
        """``"match 0.72, source HR_API v3.1, confidence 0.99, effective 2024-01-01"``."""
        item = self.item
        expiry = f", expires {item.expires_at:%Y-%m-%d}" if item.expires_at else ""
        return (
            f"match {self.similarity:.2f}, source {item.label}, confidence {item.confidence:.2f}, "
            f"effective {item.effective_from:%Y-%m-%d}{expiry}, weight {self.source_weight:.2f}"
        )


def _valid_now(at: datetime, flt: KnowledgeFilter) -> list[ColumnElement[bool]]:
    conditions = [
        KnowledgeItemRow.status == ItemStatus.ACTIVE.value,
        KnowledgeItemRow.effective_from <= at,
        or_(KnowledgeItemRow.expires_at.is_(None), KnowledgeItemRow.expires_at > at),
    ]
    if flt.sources is not None:
        conditions.append(KnowledgeItemRow.source_name.in_(sorted(flt.sources)))
    if flt.kinds is not None:
        conditions.append(KnowledgeItemRow.source_kind.in_(sorted(k.value for k in flt.kinds)))
    if flt.version is not None:
        conditions.append(KnowledgeItemRow.version == flt.version)
    if flt.keys is not None:
        conditions.append(KnowledgeItemRow.key.in_(sorted(flt.keys)))
    return conditions


def _refresh_embeddings(session: Session, ids: Sequence[str], embedder: Embedder) -> None:
    """Rows embedded by another model (or never) get vectors from this one, saved back."""
    stale = session.scalars(select(KnowledgeItemRow).where(KnowledgeItemRow.id.in_(ids))).all()
    fresh = embed_checked(embedder, [r.content for r in stale])
    for row, vector in zip(stale, fresh, strict=True):
        row.embedding, row.embedding_model = vector.tobytes(), embedder.name
    session.flush()


class VectorCache:
    """Item vectors by version id, kept in one contiguous array between lookups.

    Safe to keep because a version's text never changes once it can be retrieved: only
    ``pending_review`` versions are edited, and retrieval reads ``active`` ones.
    """

    __slots__ = ("_dim", "_index", "_lock", "_matrix", "_size")

    def __init__(self, dim: int) -> None:
        self._dim = dim
        self._index: dict[str, int] = {}
        self._matrix = np.empty((64, dim), dtype=np.float32)
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._size

    def clear(self) -> None:
        with self._lock:
            self._index.clear()
            self._size = 0

    def _append(self, ids: list[str], vectors: np.ndarray) -> None:
        needed = self._size + len(ids)
        if needed > len(self._matrix):
            grown = np.empty((max(needed, 2 * len(self._matrix)), self._dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
        self._matrix[self._size : needed] = vectors
        self._index.update(zip(ids, range(self._size, needed), strict=True))
        self._size = needed

    def rows(self, session: Session, ids: Sequence[str]) -> np.ndarray:
        """Vectors of ``ids`` in that order; unknown ones are read from the database once."""
        with self._lock:
            missing = [i for i in ids if i not in self._index]
            for start in range(0, len(missing), _FETCH_CHUNK):
                chunk = missing[start : start + _FETCH_CHUNK]
                query = select(KnowledgeItemRow.id, KnowledgeItemRow.embedding).where(
                    KnowledgeItemRow.id.in_(chunk)
                )
                found = {item_id: blob for item_id, blob in session.execute(query)}
                joined = b"".join(found[i] or b"" for i in chunk)
                vectors = np.frombuffer(joined, np.float32).reshape(len(chunk), self._dim)
                self._append(chunk, vectors)
            order = np.fromiter((self._index[i] for i in ids), dtype=np.int64, count=len(ids))
            return self._matrix[order]


def _weights(names: Sequence[str], kinds: Sequence[str], settings: KnowledgeSettings) -> np.ndarray:
    """Source weight per candidate, computed once per distinct (source, kind)."""
    labels = np.asarray([f"{n}\x00{k}" for n, k in zip(names, kinds, strict=True)])
    distinct, inverse = np.unique(labels, return_inverse=True)
    per_label = np.asarray(
        [settings.source_weight(*_split(label)) for label in distinct.tolist()], dtype=np.float32
    )
    return per_label[inverse.reshape(-1)]


def _split(label: str) -> tuple[str, SourceKind]:
    name, kind = label.split("\x00")
    return name, SourceKind(kind)


def search(
    session: Session,
    query_vec: np.ndarray,
    *,
    embedder: Embedder,
    settings: KnowledgeSettings,
    at: datetime,
    top_k: int = 5,
    flt: KnowledgeFilter | None = None,
    cache: VectorCache | None = None,
) -> list[KnowledgeHit]:
    """Best ``top_k`` items valid at ``at``, by similarity x confidence x source weight.

    Only the columns the score needs are read for the candidates (vectors come from
    ``cache`` when given); full rows are loaded for the winners alone.
    """
    if not isinstance(top_k, int) or top_k < 1:
        raise InputError("top_k", f"must be an integer >= 1, got {top_k!r}")
    query = check_vectors(query_vec, embedder.dim, field="query_vec")[0]
    rows = session.execute(
        select(
            KnowledgeItemRow.id,
            KnowledgeItemRow.confidence,
            KnowledgeItemRow.source_name,
            KnowledgeItemRow.source_kind,
            KnowledgeItemRow.embedding_model,
        ).where(*_valid_now(at, flt or KnowledgeFilter()))
    ).all()
    if not rows:
        return []
    ids, confidence, names, kinds, models = zip(*rows, strict=True)
    stale = np.flatnonzero(np.asarray(models, dtype=object) != embedder.name)
    if len(stale):
        _refresh_embeddings(session, [ids[i] for i in stale], embedder)
    store = cache if cache is not None else VectorCache(embedder.dim)
    sims = store.rows(session, ids) @ query
    weights = _weights(names, kinds, settings)
    scores = np.where(
        sims >= settings.min_similarity,
        sims * np.asarray(confidence, dtype=np.float32) * weights,
        -np.inf,
    )
    keep = np.flatnonzero(np.isfinite(scores))
    order = keep[np.argsort(-scores[keep], kind="stable")][:top_k]
    winners = {
        r.id: r
        for r in session.scalars(
            select(KnowledgeItemRow).where(KnowledgeItemRow.id.in_([ids[i] for i in order]))
        )
    }
    return [
        KnowledgeHit(
            item=winners[ids[i]].to_item(),
            similarity=float(sims[i]),
            source_weight=float(weights[i]),
            score=float(scores[i]),
        )
        for i in order
    ]


class KnowledgeTier:
    """The long-term tier as the atlas sees it: a read-mostly fallback lookup."""

    __slots__ = ("_cache", "_clock", "_embedder", "_scope", "_settings")

    def __init__(
        self,
        scope: SessionScope,
        *,
        embedder: Embedder,
        clock: Clock,
        settings: KnowledgeSettings | None = None,
    ) -> None:
        self._scope = scope
        self._embedder = embedder
        self._clock = clock
        self._settings = settings or KnowledgeSettings()
        self._cache = VectorCache(embedder.dim)

    def lookup(
        self,
        query_text: str,
        query_vec: np.ndarray | None = None,
        top_k: int = 5,
        *,
        flt: KnowledgeFilter | None = None,
    ) -> list[KnowledgeHit]:
        """Knowledge valid now for ``query_text`` (embedded here unless ``query_vec`` is given)."""
        if query_vec is None:
            if not query_text.strip():
                raise InputError("query_text", "must not be empty when no query_vec is given")
            query_vec = embed_checked(self._embedder, [query_text])[0]
        with self._scope("knowledge lookup") as session:
            return search(
                session,
                query_vec,
                embedder=self._embedder,
                settings=self._settings,
                at=to_datetime(self._clock.now()),
                top_k=top_k,
                flt=flt,
                cache=self._cache,
            )
