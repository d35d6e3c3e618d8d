"""Writes that check for contradictions: ``ConflictGuard.add`` is ``atlas.add`` plus resolution.

Detection runs *before* the statement is stored, on the same embedding: a contradiction
is often a near-paraphrase ("The server has 32 GB of RAM" / "... 64 GB"), which the
atlas would otherwise fold into the old memory as a duplicate. A superseded memory is
therefore retired first, then the new statement stored with the confidence the policy
chose, then the ``supersedes`` / ``contradicts`` edges added. Everything from detection
to the last edge runs under the atlas's lock, so concurrent writers see no half state.
Summaries that quoted a superseded or forgotten memory are re-issued without it
(``summaries.py``), or they would keep serving its claim.

The judge's first look decides at once; a pair it leaves open (the claim judge's pair
model unsure) gets its second look off the write path (``second_look.py``), and so does
the first look itself of a pair whose look would run a model (read by sentence, or a
claim not read yet: ``detector.py``, deferred looks): the add returns without them, and
a contradiction the second look confirms is resolved a moment later by the same policy
(superseded, kept old, or queued for review with its one-line reason), unless either
memory left the active set or a reviewer cleared the pair in the meantime. What the guard
does is therefore what the judge says (``atlas eval-conflicts`` measures it), only later
for open and deferred pairs. ``settle`` waits for them; ``close`` settles and makes later
writes take every look before returning (the replay harness: no human, and each turn
must see the previous one's resolutions). A scan gives
its open pairs their second look itself, in batches.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memory_core.conflicts.detector import (
    USER_KEY,
    Conflict,
    ConflictDetector,
    DetectorConfig,
    Look,
    user_metadata,
)
from memory_core.conflicts.items import ItemDraft, ReviewItem, pair_key
from memory_core.conflicts.judge import make_judge
from memory_core.conflicts.policy import ForgetRequest, Resolution, ResolutionPolicy, parse_forget
from memory_core.conflicts.queue import InMemoryReviewQueue, ReviewQueue
from memory_core.conflicts.review_filter import ScanProgress, alone, change_key, worth_review
from memory_core.conflicts.second_look import Pending, SecondLook
from memory_core.conflicts.speakers import utterance
from memory_core.conflicts.summaries import reissue_summaries
from memory_core.conflicts.verdict import ContradictionJudge, Kind, Verdict
from memory_core.embedding.base import check_vectors, embed_checked
from memory_core.engine import validate as check
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.clock import to_datetime
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus, Relation
from memory_core.engine.summarize import ExtractiveSummarizer, Summarizer

_log = logging.getLogger(__name__)


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
    """The stored memory (None for a forget request), the decisions taken, and the ids of
    the stored memories whose pair with it waits for the judge's second look, or for both
    looks when the first was deferred (``ConflictGuard.settle`` waits for them)."""

    node: MemoryNode | None
    decisions: tuple[Decision, ...] = ()
    second_look: tuple[str, ...] = ()

    def ids(self, resolution: Resolution) -> list[str]:
        """Ids of the existing memories that got ``resolution``."""
        return [d.existing_id for d in self.decisions if d.resolution is resolution]


SCAN_LOOKS = 256
"""Open pairs a scan gathers before their second look: read together, they are sorted by
length into batches with little padding (``pair_encoder``), and the queue fills as the
scan goes, not only at its end."""


LATE_WRITES = 1024
"""Writes whose second-look decisions are kept for ``ConflictGuard.settled``, the latest."""


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
        self.second_look = SecondLook(
            self.detector.second_look, self._second_looked, quick=self.detector.first_verdicts
        )
        self._late: OrderedDict[str, list[Decision]] = OrderedDict()  # write id -> decisions
        self.warmed = threading.Event()
        """Set once :meth:`warm` has run (in the background: or failed)."""

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
        defer: bool = True,
    ) -> GuardResult:
        """Like ``atlas.add``, resolving contradictions with what is stored (see module doc).
        ``defer=False`` takes every first look inside the write (only open pairs go to the
        worker), for a caller that acts on the write's decisions at once (the agent's
        turn, whose review rule counts what a correction superseded)."""
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
            looks = self.detector.screen(
                text,
                session_id=session_id,
                metadata=metadata,
                embedding=vector,
                defer=defer and not self.second_look.closed,  # closed: all inside the write
            )
            conflicts = [
                Conflict(look.existing, look.similarity, look.first.verdict)
                for look in looks
                if not look.first.open
            ]
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
        opened = [Pending(look, node.id, confidence) for look in looks if look.first.open]
        self.second_look.submit(opened)
        return GuardResult(node, decisions, tuple(p.look.existing.id for p in opened))

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every write's open pairs had their second look (a deferred pair its
        first look too) and what it confirmed is in the review queue; False when
        ``timeout`` seconds passed first. For tests and pages that read the queue right
        after a write; not under the atlas lock."""
        return self.second_look.settle(timeout)

    def settled(self, result: GuardResult, timeout: float | None = None) -> GuardResult:
        """``result`` once its write's second look is done: the decisions it took added
        (for a page or a harness that reports what a write did). Not under the atlas lock."""
        self.settle(timeout)
        if result.node is None:
            return result
        with self.atlas.lock:
            late = tuple(self._late.pop(result.node.id, ()))
        return replace(result, decisions=result.decisions + late, second_look=())

    def close(self, timeout: float | None = None) -> bool:
        """Settle; later writes give their open pairs the second look before returning."""
        return self.second_look.close(timeout)

    def warm(self) -> None:
        """Pay at start what a fresh guard's first writes would: its judge's models load
        (the claim judge's slot examples cost the first write 0.8 s of CPU on this box at
        load 7), and the stored memories and their claims are read in one batch rather than
        a few on every write until each was a candidate once. For a server that restarts on
        a stored atlas, which runs it off its writes' path (:meth:`warm_in_background`);
        not done by the constructor, since a test or a scan building a guard should not pay
        it (judge_bench's 1,000-memory atlas: 4.7 s of CPU)."""
        self.detector.warm()
        self.warmed.set()

    def warm_in_background(self) -> threading.Thread:
        """Start :meth:`warm` on a thread of its own and return it: the dashboard does so for the
        guard it makes (``dashboard.conflict_view.desk_for``), so neither the page nor the
        first writes wait for it (a restarted guard's add p99 52 ms, 15 ms warm:
        docs/conflicts.md, eighth pass). A write that comes before :attr:`warmed` is set is
        judged as a fresh guard judges it, the same verdicts, slower; a failed warm-up is
        logged and leaves the guard as fresh."""

        def run() -> None:
            try:
                self.warm()
            except Exception:  # a warm-up is an optimisation: the guard works without it
                _log.exception("the conflict guard's warm-up failed")
            finally:
                self.warmed.set()

        # not a daemon: a process that ends meanwhile waits the few seconds out rather than
        # stopping the thread inside a model load
        thread = threading.Thread(target=run, name="conflict-guard-warm", daemon=False)
        thread.start()
        return thread

    def scan(
        self, session_id: str | None = None, *, progress: ScanProgress | None = None
    ) -> list[ReviewItem]:
        """Queue every contradiction among stored active memories (of one session) for review.

        Nothing is resolved automatically: this is for memories written around the guard.
        The older memory of each pair is the ``old`` side. Only what a person would review
        is queued (see ``review_filter``): in a conversation, the user's statements against
        each other, not the assistant's echoes and confirmations of them; one item per
        change; a finding that names nothing typed (``Verdict.untyped``) only where
        neither turn meets another. ``progress(done, total)`` is called as memories are
        scanned, for a page's progress bar. A scan in parts: :class:`GuardScan`.
        """
        run = GuardScan(self)
        return run.session(session_id, progress=progress) + run.finish()

    # ------------------------------------------------------------------ internals
    def _queue_found(
        self,
        node: MemoryNode,
        conflict: Conflict,
        seen: set[tuple[str, str]],
        changes: set[tuple[str, ...]],
        queued: dict[str, ReviewItem],
    ) -> None:
        """Queue one contradiction a scan of ``node`` found, the older memory as ``old``,
        unless its pair or its change was queued already."""
        old, new = _by_age(conflict.existing, node)
        if (old.id, new.id) in seen:
            return
        seen.add((old.id, new.id))
        verdict = conflict.verdict
        if new is not node:  # judged the other way round: spans must name the sides
            verdict = self.detector.judge.judge(
                utterance(old.content, old.metadata),
                utterance(new.content, new.metadata),
                conflict.similarity,
            )
            if not verdict.is_contradiction:
                return
        change = change_key(verdict)
        if change in changes:
            return  # the same change, said again in another pair of turns
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

    def _second_looked(self, results: list[tuple[Pending, Verdict]]) -> None:
        """Resolve what the second look confirmed, as ``add`` resolves what the first look
        found (see module doc)."""
        atlas = self.atlas
        with atlas.lock:
            for pending, verdict in results:
                found = pending.look.conflict(verdict)
                if found is None or found.existing.id not in atlas or pending.new_id not in atlas:
                    continue
                old, new = atlas.get(found.existing.id), atlas.get(pending.new_id)
                if old.id == new.id or not old.status is new.status is MemoryStatus.ACTIVE:
                    continue  # folded into one memory, or settled in the meantime
                if self.queue.is_allowed(pair_key(old.content, new.content)):
                    continue  # a reviewer declared the pair compatible in the meantime
                conflict = Conflict(old, found.similarity, verdict)
                resolution = self.policy.decide(conflict, pending.confidence)
                if resolution is Resolution.SUPERSEDE:
                    reason = f"superseded by a newer statement: {verdict.reason}"
                    atlas.set_status(old.id, self.policy.old_status, reason=reason)
                # the first look kept an older memory over it (the atlas stores float32)
                lowered = new.confidence < float(np.float32(pending.confidence))
                if resolution is Resolution.KEEP_OLD or (
                    resolution is Resolution.SUPERSEDE and not lowered
                ):  # stored as the add would have stored it
                    confidence = self.policy.stored_confidence([resolution], new.confidence)
                    new = atlas.set_confidence(new.id, confidence)
                decision = self._settle(new, new.content, conflict, resolution, _user(new.metadata))
                if resolution is Resolution.SUPERSEDE:
                    reissue_summaries(atlas, [old.id], self.summarizer)
                self._late.setdefault(new.id, []).append(decision)
                while len(self._late) > LATE_WRITES:
                    self._late.popitem(last=False)

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


class GuardScan:
    """One scan of a guard's atlas in parts, a session at a time (the page's scan job):
    what :meth:`ConflictGuard.scan` does in one call. A pair or a change is queued once
    over all the parts, and the untyped findings wait for :meth:`finish`, which queues those
    whose turns met no other in any part (``review_filter``)."""

    __slots__ = ("_changes", "_guard", "_held", "_seen")

    def __init__(self, guard: ConflictGuard) -> None:
        self._guard = guard
        self._seen: set[tuple[str, str]] = set()
        self._changes: set[tuple[str, ...]] = set()
        self._held: dict[frozenset[str], tuple[MemoryNode, Conflict]] = {}  # untyped, by pair

    def session(
        self, session_id: str | None = None, *, progress: ScanProgress | None = None
    ) -> list[ReviewItem]:
        """Scan the active memories of ``session_id`` (None: all of them) and queue what
        they contradict, the untyped findings held for :meth:`finish`; the items queued."""
        guard, detector = self._guard, self._guard.detector
        queued: dict[str, ReviewItem] = {}
        nodes = [n for n in guard.atlas.nodes(session_id) if n.status is MemoryStatus.ACTIVE]
        waiting: list[tuple[MemoryNode, Look]] = []  # in scan order, open ones not looked at

        def settle_waiting() -> None:
            verdicts = detector.second_look([look for _, look in waiting])
            for (node, look), verdict in zip(waiting, verdicts, strict=True):
                conflict = look.conflict(verdict)
                if conflict is not None and verdict.untyped:
                    pair = frozenset((node.id, conflict.existing.id))
                    self._held.setdefault(pair, (node, conflict))
                elif conflict is not None:
                    guard._queue_found(node, conflict, self._seen, self._changes, queued)
            waiting.clear()

        for done, node in enumerate(nodes, start=1):
            waiting += [
                (node, look)
                for look in detector.screen_stored(node.id)
                if worth_review(*_by_age(look.existing, node))
            ]
            if done == len(nodes) or sum(look.first.open for _, look in waiting) >= SCAN_LOOKS:
                settle_waiting()  # open pairs read together, found ones queued in scan order
            if progress is not None:
                progress(done, len(nodes))
        return list(queued.values())

    def finish(self) -> list[ReviewItem]:
        """Queue the held untyped findings whose turns met no other, in scan order; the
        items queued."""
        queued: dict[str, ReviewItem] = {}
        kept = alone(self._held)
        for pair, (node, conflict) in self._held.items():
            if pair in kept:
                self._guard._queue_found(node, conflict, self._seen, self._changes, queued)
        self._held.clear()
        return list(queued.values())


def _by_age(a: MemoryNode, b: MemoryNode) -> tuple[MemoryNode, MemoryNode]:
    """The pair, older memory first."""
    old, new = sorted((a, b), key=lambda n: (n.created_at, n.id))
    return old, new


def _user(metadata: Mapping[str, Any] | None) -> str | None:
    user = (metadata or {}).get(USER_KEY)
    return None if user is None else str(user)
