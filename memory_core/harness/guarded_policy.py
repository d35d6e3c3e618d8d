"""The engine as a harness policy whose writes go through a ``ConflictGuard``.

Replays have no human: contradictions the policy resolves alone are resolved, the rest
stay in an in-memory queue (counted in ``decisions``), so a replay measures what
automatic resolution does to recall of superseded facts and their replacements.

Raw conversation turns are long and chatty, unlike the one-fact writes the library's
default thresholds are meant for, so replays use stricter ones (``TURN_POLICY``) and
trust the assistant's own turns less than the user's (``SPEAKER_CONFIDENCE``). On the
eight sample sessions (MiniLM, full capacity, 6 Dec 2026) this hides 11/30 superseded facts
and recalls 75/91 expected facts (docs/harness.md, "Through the conflict guard"; earlier
numbers per conversation and under capacity pressure in docs/conflicts.md). These values
were chosen on those same sessions: not an unseen-data score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memory_core.conflicts.guard import ConflictGuard, Decision
from memory_core.conflicts.policy import ResolutionPolicy
from memory_core.conflicts.verdict import ContradictionJudge
from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.harness.policies import AtlasPolicy

TURN_POLICY = ResolutionPolicy(auto_score=0.8, auto_similarity=0.5, sure_score=0.95)
"""Automatic resolution only for sure verdicts on pairs that are clearly about one thing,
or for an explicit rejection of what was said (score 0.95) between two long turns."""
SPEAKER_CONFIDENCE: Mapping[str, float] = {"assistant": 0.7}
"""Confidence of a turn by its speaker (others: 1.0); an assistant's paraphrase never
overrules what the user said."""


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
        self.guard = ConflictGuard(self.atlas, judge, policy or TURN_POLICY)
        # no one waits on a replay, and each turn must meet the resolutions of the one
        # before: the judge's second look runs inside each write, not after it
        self.guard.close()
        self.decisions: list[Decision] = []
        # the seed: a memory's confidence may come from how credible its source is
        self._speaker_confidence = dict(
            SPEAKER_CONFIDENCE if speaker_confidence is None else speaker_confidence
        )

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
        written = self.guard.add(
            text,
            session_id=session_id,
            metadata=metadata,
            provenance=(turn_id,),
            links_to=[i for i in links_to if i in self.atlas],
            embedding=vector,
            confidence=self._speaker_confidence.get(str(metadata.get("speaker")), 1.0),
        )
        result = self.guard.settled(written)  # the second look ran inside the add (closed)
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
