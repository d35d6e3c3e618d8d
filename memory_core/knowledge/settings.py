"""Tunables of the knowledge and episode tiers, validated once at construction."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memory_core.errors import ConfigError
from memory_core.knowledge.items import SourceKind

DEFAULT_KIND_WEIGHTS: Mapping[SourceKind, float] = MappingProxyType(
    {
        SourceKind.FIRST_PARTY_SYSTEM: 1.0,
        SourceKind.SECOND_PARTY_DOCUMENT: 0.8,
        SourceKind.LEARNED_FROM_EPISODE: 0.6,
    }
)
SECONDS_PER_DAY = 86_400.0


def _range(name: str, value: float, low: float, high: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and low <= value <= high):
        raise ConfigError(name, value, f"must be a number in [{low}, {high}]")


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeSettings:
    """Every knob of the long-term and mid-term tiers; defaults are the seed's numbers.

    ``source_weights`` overrides the per-kind weight for a named source (e.g. ``HR_API``).
    """

    trusted_sources: frozenset[str] = frozenset()
    source_weights: Mapping[str, float] = field(default_factory=dict)
    kind_weights: Mapping[SourceKind, float] = field(default_factory=lambda: DEFAULT_KIND_WEIGHTS)
    min_similarity: float = 0.3
    wrong_threshold: int = 3
    stale_days: float = 90.0
    low_confidence: float = 0.6
    episode_pending_timeout_s: float = 300.0
    retention_initial: float = 1.0
    retention_use_bonus: float = 0.1
    retention_monthly_decay: float = 0.2
    retention_archive_threshold: float = 0.3
    month_days: float = 30.0

    def __post_init__(self) -> None:
        _range("min_similarity", self.min_similarity, -1.0, 1.0)
        if not isinstance(self.wrong_threshold, int) or self.wrong_threshold < 1:
            raise ConfigError("wrong_threshold", self.wrong_threshold, "must be an integer >= 1")
        _range("stale_days", self.stale_days, 0.0, 36_500.0)
        _range("low_confidence", self.low_confidence, 0.0, 1.0)
        _range("episode_pending_timeout_s", self.episode_pending_timeout_s, 1e-3, 1e9)
        _range("retention_initial", self.retention_initial, 0.0, 1e6)
        _range("retention_use_bonus", self.retention_use_bonus, 0.0, 1e6)
        _range("retention_monthly_decay", self.retention_monthly_decay, 0.0, 1e6)
        _range("retention_archive_threshold", self.retention_archive_threshold, 0.0, 1e6)
        _range("month_days", self.month_days, 1e-6, 3650.0)
        for name, weight in self.source_weights.items():
            _range(f"source_weights[{name}]", weight, 0.0, 10.0)
        for kind in SourceKind:
            if kind not in self.kind_weights:
                raise ConfigError("kind_weights", dict(self.kind_weights), f"missing {kind.value}")
            _range(f"kind_weights[{kind.value}]", self.kind_weights[kind], 0.0, 10.0)

    def source_weight(self, source_name: str, kind: SourceKind) -> float:
        """Weight of one source: a named override, else the weight of its kind."""
        return self.source_weights.get(source_name, self.kind_weights[kind])

    def is_trusted(self, source_name: str) -> bool:
        return source_name in self.trusted_sources
