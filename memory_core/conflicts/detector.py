"""Which stored memories a statement contradicts: vector candidates, then a judge.

Candidates come from the atlas's own retrieval (read-only, ``reinforce=False``) within
one scope: the writing session, and under the ``user`` scope also the other sessions'
memories of the same user (``user_id`` metadata). A memory with no user belongs to its
session alone: a write that names no user is compared with its own session only, and a
memory that names no user is never a candidate for another session's write — sessions
that share no user never supersede each other. Only candidates at least
``min_similarity`` close by cosine are judged, so a judge (possibly an LLM) sees a
handful of pairs per write, not the atlas. Pairs a reviewer declared compatible are
skipped. A session summary is judged through the memories it quotes: a summary holds many
claims, and the one a statement contradicts should be retired, not the whole summary
(whose re-issue without it is the guard's job).

A judge with two looks (``TwoLookJudge``, the claim judge) is asked for its quick first
look only; ``screen`` returns the pairs it left open beside the contradictions it is sure
of, so the guard can give them their second look off the write path (``second_look.py``),
while ``check`` and ``scan`` give it at once, in one batch per statement.

The guard's writes go one step further (``screen(defer=True)``): a pair whose first look
would run a model (the judge's ``reads_model``: the sentence reader's pairs of texts with
several sentences, the claim judge's pairs with a text or claim its slot layer has not
read) is not looked at on the write path at all. That look costs MiniLM runs on the new
text, its claims and sentences, and a look per sentence pair (29-71 ms of CPU on a two- or
three-sentence write, docs/conflicts.md "session 14"), so it is returned as a *deferred*
look, open, and :meth:`second_look` takes its first look, then its second, on the worker,
the deferred pairs of a batch read in one model call. A pair at least the atlas's
``merge_threshold`` close stays on the path: the add would merge the write into that
memory unless the first look retires it first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import numpy as np

from memory_core.conflicts.items import pair_key
from memory_core.conflicts.speakers import utterance
from memory_core.conflicts.verdict import ContradictionJudge, FirstLook, TwoLookJudge, Verdict
from memory_core.embedding.base import embed_checked
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryKind, MemoryNode, MemoryStatus, Relation
from memory_core.errors import ConfigError

Scope = Literal["session", "user"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
USER_KEY = "user_id"
"""Metadata key naming the user a memory belongs to (narrows the ``user`` scope)."""


def user_metadata(user: object) -> dict[str, Any]:
    """Metadata naming whose a memory is (``{USER_KEY: user}``; empty for no user).

    Writers tag memories with it and the guard filters candidates with it, so the key is
    spelled in one place.
    """
    return {} if user is None else {USER_KEY: user}


def played_user(player: str, conversation_id: str) -> str:
    """The user of every turn of a played conversation (``demo:<id>``, ``replay:<id>``).

    One conversation is one person's: its sessions share a user, so the guard and scans
    compare them (memories with no user stay in their session); the player's prefix keeps
    a demo's user apart from a replay's of the same conversation.
    """
    return f"{player}:{conversation_id}"


MIN_SIMILARITY = 0.3
"""Cosine below which a candidate is not judged (another topic): a stored memory's, and a
sentence's when a long text is read by sentence (``long_texts.py``)."""

AllowList = Callable[[str], bool]
"""Answers whether a pair key (see ``items.pair_key``) was declared not a conflict."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DetectorConfig:
    """How many candidates to judge and how close they must be.

    Attributes:
        candidates: retrieved memories considered per statement.
        min_similarity: cosine below which a candidate is not judged (different topic).
        scope: ``session`` compares within the writing session only; ``user`` also across
            the sessions of the same ``user_id`` (a write without one stays in its session).
    """

    candidates: int = 8
    min_similarity: float = MIN_SIMILARITY
    scope: Scope = "user"

    def __post_init__(self) -> None:
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int):
            raise ConfigError("candidates", self.candidates, "an integer in [1, 100]")
        if not 1 <= self.candidates <= 100:
            raise ConfigError("candidates", self.candidates, "an integer in [1, 100]")
        if not isinstance(self.min_similarity, (int, float)) or not (
            -1.0 <= self.min_similarity <= 1.0
        ):
            raise ConfigError("min_similarity", self.min_similarity, "a number in [-1, 1]")
        if self.scope not in SCOPES:
            raise ConfigError("scope", self.scope, f"one of {', '.join(SCOPES)}")


@dataclass(frozen=True, slots=True)
class Conflict:
    """A stored memory the statement contradicts, by the judge's verdict."""

    existing: MemoryNode
    similarity: float
    verdict: Verdict


_DEFERRED = object()
"""The ``state`` of a deferred look's placeholder first look (module doc)."""
_NOT_LOOKED = Verdict("unrelated", 0.0, "not judged: its first look was deferred and did not run")


@dataclass(frozen=True, slots=True)
class Look:
    """A stored memory the statement contradicts by the judge's first look, or may
    contradict: the first look left the pair open for the second, or was itself deferred
    off the write path (``deferred``, module doc)."""

    existing: MemoryNode
    similarity: float
    first: FirstLook

    @property
    def deferred(self) -> bool:
        """Whether the first look was not taken yet (``ConflictDetector.taken`` takes it)."""
        return self.first.state is _DEFERRED

    def conflict(self, verdict: Verdict) -> Conflict | None:
        """The conflict ``verdict`` (this pair's final one) makes, if any."""
        return (
            Conflict(self.existing, self.similarity, verdict) if verdict.is_contradiction else None
        )


class ConflictDetector:
    """Finds contradictions between a statement (or a stored memory) and the atlas."""

    __slots__ = ("_allowed", "_atlas", "_judge", "config")

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        judge: ContradictionJudge,
        config: DetectorConfig | None = None,
        *,
        allowed: AllowList | None = None,
    ) -> None:
        self._atlas = atlas
        self._judge = judge
        self._allowed = allowed
        self.config = config or DetectorConfig()

    @property
    def judge(self) -> ContradictionJudge:
        return self._judge

    def user_scope(self, metadata: Mapping[str, Any] | None) -> Any:
        """The user whose other sessions a write with ``metadata`` is compared across;
        None keeps it in its own session (``session`` scope, or no ``user_id`` named)."""
        if self.config.scope != "user":
            return None
        return (metadata or {}).get(USER_KEY)

    def check(
        self,
        text: str,
        *,
        session_id: str,
        metadata: Mapping[str, Any] | None = None,
        embedding: np.ndarray | Sequence[float] | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> list[Conflict]:
        """Contradictions of ``text`` (not yet stored, or stored as one of ``exclude``)."""
        screened = self.screen(
            text, session_id=session_id, metadata=metadata, embedding=embedding, exclude=exclude
        )
        return self.settled(screened)

    def screen(
        self,
        text: str,
        *,
        session_id: str,
        metadata: Mapping[str, Any] | None = None,
        embedding: np.ndarray | Sequence[float] | None = None,
        exclude: frozenset[str] = frozenset(),
        defer: bool = False,
    ) -> list[Look]:
        """The first look of :meth:`check`: contradictions and open pairs, by candidate;
        with ``defer``, the pairs read by sentence come back as deferred looks (module
        doc) for :meth:`second_look` to judge."""
        if len(self._atlas) == 0:
            return []
        hits = self._atlas.retrieve(
            text,
            top_k=self.config.candidates + len(exclude),
            session_id=session_id,
            reinforce=False,
            query_embedding=embedding,
        )
        user = self.user_scope(metadata)
        if user is not None:  # the same user's memories in other sessions too
            mine = {h.node.id for h in hits}
            hits += [
                h
                for h in self._atlas.retrieve(
                    text,
                    top_k=self.config.candidates + len(exclude),
                    session_id=session_id,
                    cross_session=True,
                    metadata=user_metadata(user),
                    reinforce=False,
                    query_embedding=embedding,
                )
                if h.node.id not in mine
            ]
            hits.sort(key=lambda h: -h.breakdown.dense)
        pairs = [(h.node, h.breakdown.dense) for h in hits if h.node.id not in exclude]
        pairs = pairs[: self.config.candidates]
        if any(node.kind is MemoryKind.SUMMARY for node, _ in pairs):
            query = (
                embed_checked(self._atlas.embedder, [text])[0]
                if embedding is None
                else np.asarray(embedding, dtype=np.float32)
            )
            pairs = self._unfold(pairs, query, exclude)
        if embedding is not None and utterance(text, metadata) == text:
            self._prime([], text, np.asarray(embedding, dtype=np.float32))
        return self._judged(text, pairs, metadata, defer=defer)

    def scan(self, node_id: str) -> list[Conflict]:
        """Contradictions between a stored memory and its nearest neighbours in scope.

        A summary is not scanned itself (its claims are the memories it quotes, each scanned
        on its own), and a neighbouring summary stands for the memories it quotes, so a
        summary is never judged against its own sources.
        """
        return self.settled(self.screen_stored(node_id))

    def screen_stored(self, node_id: str) -> list[Look]:
        """The first look of :meth:`scan`: contradictions and open pairs, by neighbour."""
        node = self._atlas.get(node_id)
        if node.kind is MemoryKind.SUMMARY:
            return []
        user = self.user_scope(node.metadata)
        near = self._atlas.similar(node_id, self.config.candidates, cross_session=user is not None)
        if user is not None:  # other sessions count only through the same user's memories
            near = [
                (n, s)
                for n, s in near
                if n.session_id == node.session_id or n.metadata.get(USER_KEY) == user
            ]
        if any(n.kind is MemoryKind.SUMMARY for n, _ in near):
            query = self._atlas.embedding_of(node_id)
            near = self._unfold(near, query, frozenset({node_id}))
        if utterance(node.content, node.metadata) == node.content:
            self._prime([], node.content, self._atlas.embedding_of(node_id))
        return self._judged(node.content, near, node.metadata)

    def warm(self) -> None:
        """Have the judge load its models and read the active memories it would be handed
        (its ``warm``: the claim judge's, the sentence reader's), as ``ConflictGuard.warm``
        explains."""
        nodes = [
            n
            for n in self._atlas.nodes()
            if n.status is MemoryStatus.ACTIVE and n.kind is not MemoryKind.SUMMARY
        ]
        self._prime(nodes)  # one-sentence memories: the atlas's vectors, no model run
        self._judge.warm([utterance(n.content, n.metadata) for n in nodes])

    def _unfold(
        self,
        pairs: list[tuple[MemoryNode, float]],
        query: np.ndarray,
        exclude: frozenset[str],
    ) -> list[tuple[MemoryNode, float]]:
        """Summaries replaced by the active memories they summarize (see module doc)."""
        out: dict[str, tuple[MemoryNode, float]] = {}
        for node, similarity in pairs:
            if node.kind is not MemoryKind.SUMMARY:
                out.setdefault(node.id, (node, similarity))
                continue
            for edge in self._atlas.edges(node.id):
                member = edge.target_id
                if edge.relation is not Relation.SUMMARIZES or edge.source_id != node.id:
                    continue
                if member in out or member in exclude:
                    continue
                quoted = self._atlas.get(member)
                if quoted.status is MemoryStatus.ACTIVE:
                    out[member] = (quoted, _cosine(query, self._atlas.embedding_of(member)))
        return list(out.values())

    def _prime(
        self, nodes: list[MemoryNode], text: str = "", vector: np.ndarray | None = None
    ) -> None:
        """Give a judge that reads sentence vectors (the claim judge's slot layer) the
        embeddings the atlas already has of the texts it is about to read (the stored
        memories', the write's), so they cost no model run twice."""
        plain = [n for n in nodes if utterance(n.content, n.metadata) == n.content]
        texts = [n.content for n in plain]
        vectors = [self._atlas.embedding_of(n.id) for n in plain]
        if vector is not None and text:
            texts.append(text)
            vectors.append(np.asarray(vector, dtype=np.float32))
        if texts:
            self._judge.prime(self._atlas.embedder.name, texts, np.stack(vectors))

    def second_look(self, looks: Sequence[Look]) -> list[Verdict]:
        """The final verdict of each look: a deferred look's first look taken, then the
        judge's second look at the open ones, in one batch (a judge without one leaves no
        look open)."""
        looks = self.taken(looks)
        if isinstance(self._judge, TwoLookJudge) and any(look.first.open for look in looks):
            return self._judge.second_look([look.first for look in looks])
        return [look.first.verdict for look in looks]

    def first_verdicts(self, looks: Sequence[Look]) -> list[Verdict]:
        """The first look's verdict of each look, a deferred one's taken now: what a pair
        keeps when its second look cannot run (``second_look.SecondLook``)."""
        return [look.first.verdict for look in self.taken(looks)]

    def taken(self, looks: Sequence[Look]) -> list[Look]:
        """``looks`` with each deferred first look taken (what the deferred pairs read, read
        in one model batch first), the others as they are."""
        deferred = [look for look in looks if look.deferred]
        if not deferred:
            return list(looks)
        self._read_ahead([(look.first.a, look.first.b, look.similarity) for look in deferred])
        return [
            replace(look, first=self._first_look(look.first.a, look.first.b, look.similarity))
            if look.deferred
            else look
            for look in looks
        ]

    def settled(self, looks: Sequence[Look]) -> list[Conflict]:
        """The conflicts among ``looks`` once the open ones had their second look."""
        verdicts = self.second_look(looks)
        found = (look.conflict(v) for look, v in zip(looks, verdicts, strict=True))
        return [c for c in found if c is not None]

    def _first_look(self, a: str, b: str, similarity: float) -> FirstLook:
        if isinstance(self._judge, TwoLookJudge):
            return self._judge.first_look(a, b, similarity)
        return FirstLook(a, b, self._judge.judge(a, b, similarity))

    def _judged(
        self,
        text: str,
        candidates: list[tuple[MemoryNode, float]],
        metadata: Mapping[str, Any] | None = None,
        *,
        defer: bool = False,
    ) -> list[Look]:
        said = utterance(text, metadata)  # the judge reads what was said, not who said it
        judged = [
            (utterance(node.content, node.metadata), node, float(similarity))
            for node, similarity in candidates
            if similarity >= self.config.min_similarity
            and not (self._allowed is not None and self._allowed(pair_key(node.content, text)))
        ]
        self._prime([n for _, n, _ in judged])
        later = [defer and self._deferrable(old, said, s) for old, _, s in judged]
        now = [pair for pair, deferred in zip(judged, later, strict=True) if not deferred]
        self._read_ahead([(old, said, similarity) for old, _, similarity in now])
        found = []
        for old, node, similarity in now:
            first = self._first_look(old, said, similarity)
            if first.open or first.verdict.is_contradiction:
                found.append(Look(node, similarity, first))
        return found + [
            Look(node, similarity, FirstLook(old, said, _NOT_LOOKED, open=True, state=_DEFERRED))
            for (old, node, similarity), deferred in zip(judged, later, strict=True)
            if deferred
        ]

    def _deferrable(self, old: str, new: str, similarity: float) -> bool:
        """Whether a write's pair is judged off its path (module doc): its first look would
        run a model, and it is not close enough for the write to merge into the memory."""
        return similarity < self._atlas.config.merge_threshold and self._judge.reads_model(
            old, new, similarity
        )

    def _read_ahead(self, pairs: Sequence[tuple[str, str, float]]) -> None:
        """Have the judge read what judging ``pairs`` will read, in one model batch (the
        claim judge's slot layer, the sentence reader's sentences)."""
        if pairs:
            self._judge.read_ahead(pairs)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm > 0 else 0.0
