"""The knowledge base: one object holding the database scope, embedder, clock and settings.

Work happens in units: ``with kb.unit() as unit:`` opens one transaction and hands out
the repository, feedback loop, episodes and audit queries bound to it; leaving the block
commits, an exception rolls everything back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock, SystemClock
from memory_core.knowledge.audit import AuditQueries
from memory_core.knowledge.episodes import EpisodeStore
from memory_core.knowledge.feedback import FeedbackLoop
from memory_core.knowledge.gate import IngestionGate
from memory_core.knowledge.repository import KnowledgeRepository
from memory_core.knowledge.retrieval import KnowledgeTier, SessionScope
from memory_core.knowledge.rules import RuleRegistry
from memory_core.knowledge.settings import KnowledgeSettings


@dataclass(frozen=True, slots=True)
class KnowledgeUnit:
    """The tools of one transaction."""

    items: KnowledgeRepository
    feedback: FeedbackLoop
    episodes: EpisodeStore
    audit: AuditQueries


class KnowledgeBase:
    """Long-term knowledge and mid-term episodes over one database.

    Args:
        scope: opens one transaction, e.g. ``Database.session`` from ``memory_core.store``.
        embedder: turns item texts into vectors (``HashingEmbedder`` in unit tests).
        clock: source of "now" for validity, staleness and episode ageing.
        settings: thresholds and weights; the seed's numbers by default.
        rules: the gate's logic rules; the defaults plus any domain rules.
    """

    __slots__ = ("_clock", "_embedder", "_gate", "_scope", "_settings")

    def __init__(
        self,
        scope: SessionScope,
        *,
        embedder: Embedder,
        clock: Clock | None = None,
        settings: KnowledgeSettings | None = None,
        rules: RuleRegistry | None = None,
    ) -> None:
        self._scope = scope
        self._embedder = embedder
        self._clock = clock or SystemClock()
        self._settings = settings or KnowledgeSettings()
        self._gate = IngestionGate(settings=self._settings, rules=rules)

    @property
    def settings(self) -> KnowledgeSettings:
        return self._settings

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def gate(self) -> IngestionGate:
        return self._gate

    @contextmanager
    def unit(self, action: str = "knowledge") -> Iterator[KnowledgeUnit]:
        """One transaction with everything bound to it."""
        with self._scope(action) as session:
            items = KnowledgeRepository(
                session, gate=self._gate, embedder=self._embedder, clock=self._clock
            )
            feedback = FeedbackLoop(session, clock=self._clock, settings=self._settings)
            yield KnowledgeUnit(
                items=items,
                feedback=feedback,
                episodes=EpisodeStore(
                    session, clock=self._clock, settings=self._settings, knowledge=items
                ),
                audit=AuditQueries(
                    session,
                    repo=items,
                    feedback=feedback,
                    clock=self._clock,
                    settings=self._settings,
                ),
            )

    def tier(self) -> KnowledgeTier:
        """The fallback tier for the atlas, sharing this base's database and settings."""
        return KnowledgeTier(
            self._scope, embedder=self._embedder, clock=self._clock, settings=self._settings
        )
