"""What one turn of the agent loop needs from a memory, and the atlas behind that interface.

The loop (``loop.TurnLoop``) only recalls and stores; the atlas (``AtlasMemory``) and every
harness policy (``harness.replay.PolicyMemory``) answer the same two calls, so the loop a
tuner measures is the loop an agent runs. ``options`` carries what only one memory
understands (the atlas's ``kinds``, ``pinned``, ``ttl_hours`` ...), passed through unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryNode, RetrievalHit

if TYPE_CHECKING:
    from memory_core.conflicts.guard import ConflictGuard, GuardResult

HitT = TypeVar("HitT")
StoredT = TypeVar("StoredT")


class TurnMemory(Protocol[HitT, StoredT]):
    """A memory one turn reads from and writes to."""

    def recall(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
        options: Mapping[str, Any],
    ) -> list[HitT]:
        """Best ``top_k`` memories for ``text``; ``reinforce`` makes it an access."""
        ...

    def store(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        session_id: str,
        provenance: tuple[str, ...],
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
        options: Mapping[str, Any],
    ) -> StoredT | None:
        """Store ``text``; what now carries it (None: the memory declined it)."""
        ...

    def hit_id(self, hit: HitT) -> str: ...

    def stored_id(self, stored: StoredT) -> str: ...


class _AtlasReads:
    """Recall from an atlas; ``cross_session`` is the default scope (``options`` may
    override it)."""

    __slots__ = ("atlas", "cross_session")

    def __init__(self, atlas: ElasticMemoryAtlas, *, cross_session: bool = False) -> None:
        self.atlas = atlas
        self.cross_session = cross_session

    def recall(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        top_k: int,
        session_id: str | None,
        reinforce: bool,
        options: Mapping[str, Any],
    ) -> list[RetrievalHit]:
        if not len(self.atlas):
            return []
        return self.atlas.retrieve(
            text,
            top_k=top_k,
            session_id=session_id,
            reinforce=reinforce,
            query_embedding=vector,
            **{"cross_session": self.cross_session, **options},
        )

    def hit_id(self, hit: RetrievalHit) -> str:
        return hit.node.id


class AtlasMemory(_AtlasReads):
    """``ElasticMemoryAtlas`` as a ``TurnMemory[RetrievalHit, MemoryNode]``.

    Links to recalled memories evicted since are dropped; a caller's own ``links_to``
    (in ``options``) must exist.
    """

    __slots__ = ()

    def store(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        session_id: str,
        provenance: tuple[str, ...],
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
        options: Mapping[str, Any],
    ) -> MemoryNode | None:
        return _write(
            self.atlas.add, self.atlas, text, vector, session_id, provenance, links_to,
            metadata, options,
        )  # fmt: skip

    def stored_id(self, stored: MemoryNode) -> str:
        return stored.id


def _write(
    add: Callable[..., StoredT],
    atlas: ElasticMemoryAtlas,
    text: str,
    vector: np.ndarray | None,
    session_id: str,
    provenance: tuple[str, ...],
    recalled: Sequence[str],
    metadata: Mapping[str, Any],
    options: Mapping[str, Any],
) -> StoredT:
    """One write through ``add`` (the atlas's or the guard's): linked to the caller's own
    ``options["links_to"]`` (checked by the atlas), then to the recalled memories still held."""
    extra = dict(options)
    explicit = list(extra.pop("links_to", None) or ())
    links = [*explicit, *(i for i in recalled if i in atlas and i not in explicit)]
    return add(
        text,
        session_id=session_id,
        metadata=metadata,
        provenance=provenance,
        links_to=links,
        embedding=vector,
        **extra,
    )


class GuardedMemory(_AtlasReads):
    """The atlas behind a ``ConflictGuard``: writes are checked for contradictions (a
    correction supersedes what it corrects, which the orchestrator's review rule counts);
    what is stored is the guard's whole result, so callers can say what it decided."""

    __slots__ = ("guard",)

    def __init__(self, guard: ConflictGuard, *, cross_session: bool = False) -> None:
        super().__init__(guard.atlas, cross_session=cross_session)
        self.guard = guard

    def store(
        self,
        text: str,
        vector: np.ndarray | None,
        *,
        session_id: str,
        provenance: tuple[str, ...],
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
        options: Mapping[str, Any],
    ) -> GuardResult:
        # every first look inside the write: the turn reports and counts its decisions now
        add = functools.partial(self.guard.add, defer=False)
        return _write(
            add, self.atlas, text, vector, session_id, provenance, links_to, metadata, options,
        )  # fmt: skip

    def stored_id(self, stored: GuardResult) -> str:
        """The stored memory's id; "" when the write was the guard's own forget request."""
        return stored.node.id if stored.node is not None else ""
