"""The engine as a harness policy whose writes go through a ``ConflictGuard``.

Replays have no human: contradictions the policy resolves alone are resolved, the rest
stay in an in-memory queue (counted in ``decisions``), so a replay measures what
automatic resolution does to recall of superseded facts and their replacements.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memory_core.clock import Clock
from memory_core.config import AtlasConfig
from memory_core.conflicts.guard import ConflictGuard, Decision
from memory_core.conflicts.judge import ContradictionJudge
from memory_core.conflicts.policy import ResolutionPolicy
from memory_core.embedding.base import Embedder
from memory_core.harness.policies import AtlasPolicy


class GuardedAtlasPolicy(AtlasPolicy):
    """``AtlasPolicy`` with detection and automatic resolution on every write."""

    def __init__(
        self,
        config: AtlasConfig,
        embedder: Embedder,
        clock: Clock,
        *,
        judge: ContradictionJudge | None = None,
        policy: ResolutionPolicy | None = None,
        speaker_confidence: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(config, embedder, clock)
        self.guard = ConflictGuard(self.atlas, judge, policy)
        self.decisions: list[Decision] = []
        # the seed: a memory's confidence may come from how credible its source is
        self._speaker_confidence = dict(speaker_confidence or {})

    def add(
        self,
        text: str,
        vector: np.ndarray,
        *,
        turn_id: str,
        session_id: str,
        links_to: Sequence[str],
        metadata: Mapping[str, Any],
    ) -> str:
        """Store one turn through the guard; "" when the turn was a forget request."""
        result = self.guard.add(
            text,
            session_id=session_id,
            metadata=metadata,
            provenance=(turn_id,),
            links_to=[i for i in links_to if i in self.atlas],
            embedding=vector,
            confidence=self._speaker_confidence.get(str(metadata.get("speaker")), 1.0),
        )
        self.decisions.extend(result.decisions)
        node = result.node
        if node is None:
            return ""
        if node.id in self.atlas:  # also right when the turn merged into an older memory
            self._provenance[node.id] = node.provenance
        return node.id

    def resolutions(self) -> dict[str, int]:
        """How many contradictions got each resolution during the replay."""
        return dict(sorted(Counter(d.resolution.value for d in self.decisions).items()))
