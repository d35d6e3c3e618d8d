"""Long-term retrieval: filter first, then vector search, then confidence and source weight.

The seed's lesson: pure similarity mixes expired policies into answers; the validity
window and status are SQL filters, the similarity is one matrix product over the
survivors, and the final score is ``similarity x confidence x source weight``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from memory_core.clock import Clock, to_datetime
from memory_core.embedding.base import Embedder, check_vectors, embed_checked
from memory_core.errors import InputError
from memory_core.knowledge.items import ItemStatus, KnowledgeItem, SourceKind
from memory_core.knowledge.models import KnowledgeItemRow
from memory_core.knowledge.settings import KnowledgeSettings

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


def _candidates(session: Session, at: datetime, flt: KnowledgeFilter) -> list[KnowledgeItemRow]:
    query = select(KnowledgeItemRow).where(
        KnowledgeItemRow.status == ItemStatus.ACTIVE.value,
        KnowledgeItemRow.effective_from <= at,
        or_(KnowledgeItemRow.expires_at.is_(None), KnowledgeItemRow.expires_at > at),
    )
    if flt.sources is not None:
        query = query.where(KnowledgeItemRow.source_name.in_(sorted(flt.sources)))
    if flt.kinds is not None:
        query = query.where(KnowledgeItemRow.source_kind.in_(sorted(k.value for k in flt.kinds)))
    if flt.version is not None:
        query = query.where(KnowledgeItemRow.version == flt.version)
    if flt.keys is not None:
        query = query.where(KnowledgeItemRow.key.in_(sorted(flt.keys)))
    return list(session.scalars(query.order_by(KnowledgeItemRow.id)))


def _matrix(rows: Sequence[KnowledgeItemRow], embedder: Embedder) -> np.ndarray:
    """Stored vectors as one array; rows embedded by another model are re-embedded and saved."""
    stale = [
        r
        for r in rows
        if r.embedding_model != embedder.name
        or r.embedding is None
        or len(r.embedding) != embedder.dim * 4
    ]
    if stale:
        fresh = embed_checked(embedder, [r.content for r in stale])
        for row, vector in zip(stale, fresh, strict=True):
            row.embedding, row.embedding_model = vector.tobytes(), embedder.name
    blob = b"".join(r.embedding or b"" for r in rows)
    return np.frombuffer(blob, dtype=np.float32).reshape(len(rows), embedder.dim)


def search(
    session: Session,
    query_vec: np.ndarray,
    *,
    embedder: Embedder,
    settings: KnowledgeSettings,
    at: datetime,
    top_k: int = 5,
    flt: KnowledgeFilter | None = None,
) -> list[KnowledgeHit]:
    """Best ``top_k`` items valid at ``at``, by similarity x confidence x source weight."""
    if not isinstance(top_k, int) or top_k < 1:
        raise InputError("top_k", f"must be an integer >= 1, got {top_k!r}")
    query = check_vectors(query_vec, embedder.dim, field="query_vec")[0]
    rows = _candidates(session, at, flt or KnowledgeFilter())
    if not rows:
        return []
    sims = _matrix(rows, embedder) @ query
    confidence = np.fromiter((r.confidence for r in rows), dtype=np.float32, count=len(rows))
    weights = np.fromiter(
        (settings.source_weight(r.source_name, SourceKind(r.source_kind)) for r in rows),
        dtype=np.float32,
        count=len(rows),
    )
    scores = np.where(sims >= settings.min_similarity, sims * confidence * weights, -np.inf)
    keep = np.flatnonzero(np.isfinite(scores))
    order = keep[np.argsort(-scores[keep], kind="stable")][:top_k]
    return [
        KnowledgeHit(
            item=rows[i].to_item(),
            similarity=float(sims[i]),
            source_weight=float(weights[i]),
            score=float(scores[i]),
        )
        for i in order
    ]


class KnowledgeTier:
    """The long-term tier as the atlas sees it: a read-mostly fallback lookup."""

    __slots__ = ("_clock", "_embedder", "_scope", "_settings")

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
            )
