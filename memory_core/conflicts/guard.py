"""Writes that check for contradictions: ``ConflictGuard.add`` is ``atlas.add`` plus resolution.

Detection runs *before* the statement is stored, on the same embedding: a contradiction
is often a near-paraphrase ("The server has 32 GB of RAM" / "... 64 GB"), which the
atlas would otherwise fold into the old memory as a duplicate. A superseded memory is
therefore retired first, then the new statement stored with the confidence the policy
chose, then the ``supersedes`` / ``contradicts`` edges added. Everything from detection
to the last edge runs under the atlas's lock, so concurrent writers see no half state.
Summaries that quoted a superseded or forgotten memory are re-issued without it
(``summaries.py``), or they would keep serving its claim.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory_core.conflicts.detector import (
    USER_KEY,
    Conflict,
    ConflictDetector,
    DetectorConfig,
    user_metadata,
)
from memory_core.conflicts.items import ItemDraft, ReviewItem
from memory_core.conflicts.judge import make_judge
from memory_core.conflicts.policy import ForgetRequest, Resolution, ResolutionPolicy, parse_forget
from memory_core.conflicts.queue import InMemoryReviewQueue, ReviewQueue
from memory_core.conflicts.review_filter import ScanProgress, change_key, worth_review
from memory_core.conflicts.speakers import utterance
from memory_core.conflicts.summaries import reissue_summaries
from memory_core.conflicts.verdict import ContradictionJudge, Kind
from memory_core.embedding.base import check_vectors, embed_checked
from memory_core.engine import validate as check
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus, Relation
from memory_core.engine.summarize import ExtractiveSummarizer, Summarizer


@dataclass(frozen=True, slots=True)
class Decision:
    """What the guard did about one stored memory the write contradicted (or forgot)."""

    resolution: Resolution
    existing_id: str
    existing_text: str
    similarity: float
    score: float
    kind: Kind
    reason: str
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class GuardResult:
    """The stored memory (None for a forget request) and the decisions taken."""

    node: MemoryNode | None
    decisions: tuple[Decision, ...] = ()

    def ids(self, resolution: Resolution) -> list[str]:
        """Ids of the existing memories that got ``resolution``."""
        return [d.existing_id for d in self.decisions if d.resolution is resolution]


class ConflictGuard:
    """Runs detection and the resolution policy on every write through it.

    ``summarizer`` re-writes summaries that covered a retired memory; give the atlas's own
    when it has a custom one.
    """

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        judge: ContradictionJudge | None = None,
        policy: ResolutionPolicy | None = None,
        queue: ReviewQueue | None = None,
        *,
        detector: DetectorConfig | None = None,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.atlas = atlas
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self.policy = policy or ResolutionPolicy()
        self.queue: ReviewQueue = queue if queue is not None else InMemoryReviewQueue()
        self.detector = ConflictDetector(
            atlas, judge or make_judge(), detector, allowed=self.queue.is_allowed
        )
        self._last: dict[str, str] = {}  # session -> id of the last memory written through us

    def add(
        self,
        content: str,
        *,
        session_id: str = "default",
        kind: MemoryKind | str = MemoryKind.SESSION,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        confidence: float = 1.0,
        ttl_hours: float | None = None,
        pinned: bool = False,
        provenance: Iterable[str] | None = None,
        links_to: Iterable[str] | None = None,
        embedding: Sequence[float] | np.ndarray | None = None,
    ) -> GuardResult:
        """Like ``atlas.add``, resolving contradictions with what is stored (see module doc)."""
        atlas = self.atlas
        text = check.content(content, atlas.config.max_content_chars, "content")
        session_id = check.session_id(session_id)
        confidence = check.unit_interval(confidence, "confidence")
        request = parse_forget(text)
        if request is not None:
            return self._forget(request, session_id, metadata)
        vector = (
            embed_checked(atlas.embedder, [text])[0]
            if embedding is None
            else check_vectors([embedding], atlas.embedder.dim, field="embedding")[0]
        )
        with atlas.lock:
            conflicts = self.detector.check(
                text, session_id=session_id, metadata=metadata, embedding=vector
            )
            resolutions = [self.policy.decide(c, confidence) for c in conflicts]
            for conflict, resolution in zip(conflicts, resolutions, strict=True):
                if resolution is Resolution.SUPERSEDE:
                    atlas.set_status(
                        conflict.existing.id,
                        self.policy.old_status,
                        reason=f"superseded by a newer statement: {conflict.verdict.reason}",
                    )
            node = atlas.add(
                text,
                session_id=session_id,
                kind=kind,
                metadata=metadata,
                importance=importance,
                confidence=self.policy.stored_confidence(resolutions, confidence),
                ttl_hours=ttl_hours,
                pinned=pinned,
                provenance=provenance,
                links_to=links_to,
                embedding=vector,
            )
            decisions = tuple(
                self._settle(node, text, c, r, _user(metadata))
                for c, r in zip(conflicts, resolutions, strict=True)
            )
            superseded = [d.existing_id for d in decisions if d.resolution is Resolution.SUPERSEDE]
            reissue_summaries(atlas, superseded, self.summarizer)
            self._last[session_id] = node.id
            return GuardResult(node, decisions)

    def warm(self) -> None:
        """Pay at start what a fresh guard's first writes would: its judge's models load
        (the claim judge's slot examples cost the first write 0.8 s of CPU on this box at
        load 7), and the stored memories and their claims are read in one batch rather than
        a few on every write until each was a candidate once. For a server that restarts on
        a stored atlas; opt-in, since a page or a test building a guard should not pay it
        (judge_bench's 1,000-memory atlas: 4.7 s of CPU)."""
        self.detector.warm()

    def scan(
        self, session_id: str | None = None, *, progress: ScanProgress | None = None
    ) -> list[ReviewItem]:
        """Queue every contradiction among stored active memories (of one session) for review.

        Nothing is resolved automatically: this is for memories written around the guard.
        The older memory of each pair is the ``old`` side. Only what a person would review
        is queued (see ``worth_review``): in a conversation, the user's statements against
        each other, not the assistant's echoes and confirmations of them; one item per
        change. ``progress(done, total)`` is called as memories are scanned, for a page's
        progress bar.
        """
        queued: dict[str, ReviewItem] = {}
        seen: set[tuple[str, str]] = set()
        changes: set[tuple[str, ...]] = set()
        nodes = [n for n in self.atlas.nodes(session_id) if n.status is MemoryStatus.ACTIVE]
        for done, node in enumerate(nodes, start=1):
            for conflict in self.detector.scan(node.id):
                old, new = sorted((conflict.existing, node), key=lambda n: (n.created_at, n.id))
                if (old.id, new.id) in seen or not worth_review(old, new):
                    continue
                seen.add((old.id, new.id))
                verdict = conflict.verdict
                if new is not node:  # judged the other way round: spans must name the sides
                    verdict = self.detector.judge.judge(
                        utterance(old.content, old.metadata),
                        utterance(new.content, new.metadata),
                        conflict.similarity,
                    )
                    if not verdict.is_contradiction:
                        continue
                change = change_key(verdict)
                if change in changes:
                    continue  # the same change, said again in another pair of turns
                changes.add(change)
                item = self._enqueue(
                    Conflict(old, conflict.similarity, verdict),
                    new.id,
                    new.content,
                    new.session_id,
                    new.confidence,
                    _user(new.metadata),
                )
                queued[item.id] = item
            if progress is not None:
                progress(done, len(nodes))
        return list(queued.values())

    # ------------------------------------------------------------------ internals
    def _settle(
        self,
        node: MemoryNode,
        text: str,
        conflict: Conflict,
        resolution: Resolution,
        user: str | None,
    ) -> Decision:
        old = conflict.existing
        separate = node.id != old.id and node.id in self.atlas and old.id in self.atlas
        item_id = None
        if resolution is Resolution.SUPERSEDE and separate:
            self.atlas.link(node.id, old.id, Relation.SUPERSEDES)
        if resolution in (Resolution.SUPERSEDE, Resolution.KEEP_OLD) and separate:
            self.atlas.link(node.id, old.id, Relation.CONTRADICTS, conflict.verdict.score)
        if resolution is Resolution.REVIEW:
            item_id = self._enqueue(
                conflict,
                node.id if separate else None,
                text,
                node.session_id,
                node.confidence,
                user,
            ).id
        return Decision(
            resolution=resolution,
            existing_id=old.id,
            existing_text=old.content,
            similarity=conflict.similarity,
            score=conflict.verdict.score,
            kind=conflict.verdict.kind,
            reason=conflict.verdict.reason,
            item_id=item_id,
        )

    def _enqueue(
        self,
        conflict: Conflict,
        new_id: str | None,
        new_text: str,
        session_id: str,
        new_confidence: float,
        user_id: str | None = None,
    ) -> ReviewItem:
        old, verdict = conflict.existing, conflict.verdict
        draft = ItemDraft(
            old_id=old.id,
            old_text=old.content,
            old_session_id=old.session_id,
            new_id=new_id,
            new_text=new_text,
            session_id=session_id,
            similarity=max(-1.0, min(1.0, conflict.similarity)),
            score=verdict.score,
            reason=verdict.reason,
            kind=verdict.kind,
            suggested=self.policy.suggest(conflict, new_confidence),
            spans=verdict.spans,
            user_id=user_id,
        )
        return self.queue.enqueue(draft, at=to_datetime(self.atlas.clock.now()))

    def _forget(
        self, request: ForgetRequest, session_id: str, metadata: Mapping[str, Any] | None
    ) -> GuardResult:
        with self.atlas.lock:
            target = self._forget_target(request, session_id, metadata)
            if target is None:
                return GuardResult(None)
            node, similarity = target
            self.atlas.forget(node.id, reason=f"user asked to forget ({request.describe()})")
            reissue_summaries(self.atlas, [node.id], self.summarizer)
            self._last.pop(session_id, None)
            decision = Decision(
                resolution=Resolution.FORGET,
                existing_id=node.id,
                existing_text=node.content,
                similarity=similarity,
                score=1.0,
                kind="none",
                reason=f"user asked to forget {request.describe()}",
            )
            return GuardResult(None, (decision,))

    def _forget_target(
        self, request: ForgetRequest, session_id: str, metadata: Mapping[str, Any] | None
    ) -> tuple[MemoryNode, float] | None:
        atlas = self.atlas
        if request.topic is None:
            last = self._last.get(session_id)
            if last is not None and last in atlas:
                node = atlas.get(last)
                if node.status is MemoryStatus.ACTIVE:
                    return node, 1.0
            if session_id not in atlas.sessions():
                return None
            active = [n for n in atlas.nodes(session_id) if n.status is MemoryStatus.ACTIVE]
            return (active[-1], 1.0) if active else None
        if len(atlas) == 0:
            return None
        user = self.detector.user_scope(metadata)  # no user: this session's memories only
        hits = atlas.retrieve(
            request.topic,
            top_k=1,
            kinds=_QUOTABLE,  # a summary is re-issued without the target, not forgotten
            session_id=session_id,
            cross_session=user is not None,
            metadata=user_metadata(user) or None,
            reinforce=False,
        )
        if not hits or hits[0].breakdown.dense < self.policy.forget_min_similarity:
            return None
        return hits[0].node, hits[0].breakdown.dense


_QUOTABLE = tuple(k for k in MemoryKind if k is not MemoryKind.SUMMARY)


def _user(metadata: Mapping[str, Any] | None) -> str | None:
    user = (metadata or {}).get(USER_KEY)
    return None if user is None else str(user)
