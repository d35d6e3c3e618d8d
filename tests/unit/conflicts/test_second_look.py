"""The second look off the write path: the worker's promises, and the guard that uses it.

The worker is driven with plain functions (gated by events, never by sleeps); the guard
with the real claim judge over the slot tests' fake embedder under MiniLM's name, a pair
model that is never sure (p = 0.5, so every candidate pair is open) and a stand-in
cross-encoder. Real MiniLM runs in ``tests/integration/conflicts/test_second_look_minilm.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from memory_core import AtlasConfig, ElasticMemoryAtlas, ManualClock
from memory_core.conflicts import pair_encoder, pair_model
from memory_core.conflicts.claim_judge import ClaimJudge
from memory_core.conflicts.detector import DetectorConfig, Look
from memory_core.conflicts.guard import ConflictGuard
from memory_core.conflicts.long_texts import read_by_sentence
from memory_core.conflicts.policy import Resolution, ResolutionPolicy
from memory_core.conflicts.queue import InMemoryReviewQueue
from memory_core.conflicts.second_look import Pending, SecondLook
from memory_core.conflicts.verdict import FirstLook, Verdict
from memory_core.embedding.minilm import MODEL_NAME
from memory_core.engine.model import MemoryStatus, Relation
from memory_core.errors import ConfigError
from tests.unit.conflicts.test_pair_encoder import _MiniLMNamed
from tests.unit.conflicts.test_pair_model import _constant

REVIEWED = ResolutionPolicy(auto_score=0.8)
"""A model's contradiction alone (score at most ``LEARNED_SCORE``, 0.75) goes to review."""
FAST = Verdict("compatible", 0.1, "pair model p=0.50")
SLOW = Verdict("contradiction", 0.7, "second look")
A, B = "I'm married.", "Happily married for ten years now."


def _pending(count: int) -> list[Pending]:
    atlas = ElasticMemoryAtlas(AtlasConfig(memory_watermark=1.0), clock=ManualClock(0.0))
    node = atlas.add("stored", session_id="s")
    return [
        Pending(Look(node, 0.9, FirstLook("a", f"b{i}", FAST, open=True)), f"m-{i}", 1.0)
        for i in range(count)
    ]


class _Worker:
    """A second look that waits for ``release`` on its first call, and a delivery log."""

    def __init__(self, *, fail: bool = False) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.batches: list[int] = []
        self.delivered: list[tuple[str, Verdict]] = []
        self.threads: set[int] = set()
        self.fail = fail

    def look(self, looks: Sequence[Look]) -> list[Verdict]:
        self.started.set()
        self.release.wait()
        self.batches.append(len(looks))
        if self.fail:
            raise RuntimeError("encoder out of memory")
        return [SLOW for _ in looks]

    def deliver(self, results: list[tuple[Pending, Verdict]]) -> None:
        self.threads.add(threading.get_ident())
        self.delivered += [(p.new_id, v) for p, v in results]


def test_submit_returns_before_the_second_look_and_settle_waits_for_it() -> None:
    worker = _Worker()
    looks = SecondLook(worker.look, worker.deliver)
    looks.submit(_pending(3))  # returns although the second look is held
    assert looks.pending == 3 and worker.delivered == []
    worker.release.set()
    assert looks.settle()
    assert worker.delivered == [("m-0", SLOW), ("m-1", SLOW), ("m-2", SLOW)]
    assert looks.pending == 0 and looks.errors == ()
    assert threading.get_ident() not in worker.threads
    assert not [t for t in threading.enumerate() if t.name == "atlas-second-look"]


def test_pairs_that_wait_are_read_together_in_batches() -> None:
    worker = _Worker()
    looks = SecondLook(worker.look, worker.deliver, batch=2)
    pairs = _pending(5)
    looks.submit(pairs[:1])
    assert worker.started.wait(timeout=60)  # the worker took it and waits
    looks.submit(pairs[1:])
    worker.release.set()
    assert looks.settle()
    assert worker.batches == [1, 2, 2]


def test_a_failing_second_look_delivers_the_first_looks_and_keeps_the_error() -> None:
    worker = _Worker(fail=True)
    worker.release.set()
    looks = SecondLook(worker.look, worker.deliver)
    looks.submit(_pending(2))
    assert looks.settle()
    assert worker.delivered == [("m-0", FAST), ("m-1", FAST)]
    assert len(looks.errors) == 1 and "encoder out of memory" in looks.errors[0]


def test_a_failing_delivery_is_kept_and_later_pairs_still_run() -> None:
    calls: list[int] = []

    def deliver(results: list[tuple[Pending, Verdict]]) -> None:
        calls.append(len(results))
        if len(calls) == 1:
            raise ValueError("queue unreachable")

    looks = SecondLook(lambda batch: [SLOW for _ in batch], deliver)
    looks.submit(_pending(1))
    assert looks.settle()
    looks.submit(_pending(1))
    assert looks.settle()
    assert calls == [1, 1]
    assert len(looks.errors) == 1 and "queue unreachable" in looks.errors[0]


def test_a_full_queue_hands_back_first_looks_at_once() -> None:
    worker = _Worker()
    looks = SecondLook(worker.look, worker.deliver, capacity=1)
    pairs = _pending(3)
    looks.submit(pairs[:1])  # taken by the worker: the queue is full
    looks.submit(pairs[1:])
    assert worker.delivered == [("m-1", FAST), ("m-2", FAST)]  # on the caller, not lost
    assert looks.overflowed == 2
    worker.release.set()
    assert looks.settle()
    assert worker.delivered[-1] == ("m-0", SLOW)


def test_a_full_queue_takes_a_deferred_pair_s_first_look_on_the_caller() -> None:
    worker = _Worker()
    taken: list[int] = []

    def first_looks(looks: Sequence[Look]) -> list[Verdict]:
        taken.append(len(looks))
        return [FAST for _ in looks]

    looks = SecondLook(worker.look, worker.deliver, quick=first_looks, capacity=1)
    pairs = _pending(3)
    looks.submit(pairs[:1])
    looks.submit(pairs[1:])
    assert taken == [2]  # the two that did not fit, at once, in one call
    assert worker.delivered == [("m-1", FAST), ("m-2", FAST)]
    worker.release.set()
    assert looks.settle()


def test_a_deferred_first_look_that_fails_too_is_kept_and_the_worker_still_ends() -> None:
    worker = _Worker(fail=True)
    worker.release.set()

    def broken(looks: Sequence[Look]) -> list[Verdict]:
        raise RuntimeError("slot model missing")

    looks = SecondLook(worker.look, worker.deliver, quick=broken)
    looks.submit(_pending(2))
    assert looks.settle(timeout=10.0)
    assert worker.delivered == []
    assert len(looks.errors) == 2 and "slot model missing" in looks.errors[1]


def test_after_close_a_submission_is_looked_at_on_the_caller() -> None:
    worker = _Worker()
    worker.release.set()
    looks = SecondLook(worker.look, worker.deliver)
    assert looks.close()
    looks.submit(_pending(1))
    assert worker.delivered == [("m-0", SLOW)]
    assert worker.threads == {threading.get_ident()}


@pytest.mark.parametrize(("field", "value"), [("capacity", 0), ("batch", True)])
def test_bad_sizes_are_refused(field: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=field):
        SecondLook(lambda batch: [], lambda results: None, **{field: value})


# ---------------------------------------------------------------- through the guard
class _Encoder:
    """Stands in for the cross-encoder: a fixed probability, held until ``release``."""

    def __init__(self, probability: float) -> None:
        self.probability = probability
        self.asked: list[tuple[str, str]] = []
        self.release = threading.Event()
        self.release.set()

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.release.wait()
        self.asked += pairs
        return np.full(len(pairs), self.probability)


@pytest.fixture
def encoder(monkeypatch: pytest.MonkeyPatch) -> _Encoder:
    encoder = _Encoder(0.97)
    monkeypatch.setattr(pair_encoder, "load", lambda: encoder)
    monkeypatch.setattr(pair_model, "load", lambda: _constant(0.0, embedder=MODEL_NAME))
    return encoder


def _guard(policy: ResolutionPolicy = REVIEWED) -> ConflictGuard:
    embedder = _MiniLMNamed()
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=embedder, clock=ManualClock(0.0)
    )
    everything = DetectorConfig(min_similarity=-1.0)
    judge = ClaimJudge(embedder=embedder)
    return ConflictGuard(atlas, judge, policy, InMemoryReviewQueue(), detector=everything)


def test_an_open_pair_reaches_the_queue_after_the_add(encoder: _Encoder) -> None:
    guard = _guard()
    old = guard.add(A, session_id="s").node
    assert old is not None
    encoder.release.clear()
    result = guard.add(B, session_id="s")
    assert result.decisions == () and result.second_look == (old.id,)
    assert guard.queue.items() == []  # the add did not wait for the second look
    encoder.release.set()
    (decision,) = guard.settled(result).decisions  # waits, then tells what the write did
    assert (decision.resolution, decision.existing_id) == (Resolution.REVIEW, old.id)
    (item,) = guard.queue.items()
    assert item.id == decision.item_id
    assert (item.old_id, item.new_id) == (old.id, result.node.id if result.node else None)
    assert item.reason.startswith("second look: cross-encoder p=0.97")
    assert encoder.asked == [(A, B)]


def test_a_confirmed_pair_is_resolved_by_the_policy_as_an_add_would(encoder: _Encoder) -> None:
    guard = _guard(ResolutionPolicy())  # the library's default resolves score 0.75 alone
    old = guard.add(A, session_id="s").node
    assert old is not None
    result = guard.add(B, session_id="s", confidence=0.85)
    assert result.node is not None and result.node.confidence == pytest.approx(0.85)
    assert guard.settle()
    assert guard.atlas.get(old.id).status is MemoryStatus.SUPERSEDED
    assert guard.atlas.get(result.node.id).confidence == pytest.approx(0.9)  # the winner's
    assert guard.queue.items() == []
    links = {(e.source_id, e.relation) for e in guard.atlas.edges(old.id)}
    assert (result.node.id, Relation.SUPERSEDES) in links


def test_a_pair_the_second_look_clears_is_not_queued(encoder: _Encoder) -> None:
    encoder.probability = 0.03
    guard = _guard()
    guard.add(A, session_id="s")
    assert guard.add(B, session_id="s").second_look
    assert guard.settle()
    assert guard.queue.items() == []


def test_a_pair_settled_before_its_second_look_is_not_queued(encoder: _Encoder) -> None:
    guard = _guard()
    old = guard.add(A, session_id="s").node
    assert old is not None
    encoder.release.clear()
    guard.add(B, session_id="s")
    guard.atlas.set_status(old.id, MemoryStatus.SUPERSEDED, reason="settled by hand")
    encoder.release.set()
    assert guard.settle()
    assert guard.queue.items() == []


def test_two_users_writing_at_once_each_get_their_item(encoder: _Encoder) -> None:
    guard = _guard()
    encoder.release.clear()

    def write(user: str) -> None:
        for text in (A, B):
            guard.add(text, session_id=user, metadata={"user_id": user})

    writers = [threading.Thread(target=write, args=(user,)) for user in ("ana", "ben")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    encoder.release.set()
    assert guard.settle()
    items = guard.queue.items()
    assert sorted((i.user_id, i.session_id, i.old_session_id) for i in items) == [
        ("ana", "ana", "ana"),
        ("ben", "ben", "ben"),
    ]
    assert encoder.asked == [(A, B)]  # one pair of texts: read once for both users


def test_a_failing_second_look_queues_the_first_look_and_says_so(
    encoder: _Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> Any:
        raise RuntimeError("no model file")

    monkeypatch.setattr(pair_encoder, "load", broken)
    guard = _guard()
    guard.add(A, session_id="s")
    guard.add(B, session_id="s")
    assert guard.settle()
    (item,) = guard.queue.items()  # the pair model's p = 0.5 reaches its threshold
    assert item.reason.startswith("pair model p=0.50")
    assert "no model file" in guard.second_look.errors[0]


def test_after_close_an_add_returns_with_its_second_look_done(encoder: _Encoder) -> None:
    guard = _guard()
    guard.add(A, session_id="s")
    assert guard.close()
    guard.add(B, session_id="s")
    assert len(guard.queue.items()) == 1


LONG = "Big week at work. I'm happily married for ten years now."
"""A write of two sentences: the sentence reader's pairs, judged off the add (the pair
model unsure of its second sentence against ``A``: the second look confirms)."""
SURE = "Big week at work. I'm single again."
"""The same, a change the first look is sure of."""


class _Held(_MiniLMNamed):
    """The fake embedder, holding a call that asks for the first sentence of ``LONG``
    (what only the deferred look reads) until ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.release.set()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if "Big week at work." in texts:
            self.release.wait()
        return super().embed(texts)


def _sentence_guard(embedder: _MiniLMNamed | None = None) -> ConflictGuard:
    embedder = embedder or _MiniLMNamed()
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0), embedder=embedder, clock=ManualClock(0.0)
    )
    judge = read_by_sentence(ClaimJudge(embedder=embedder), embedder=embedder)
    everything = DetectorConfig(min_similarity=-1.0)
    return ConflictGuard(atlas, judge, REVIEWED, InMemoryReviewQueue(), detector=everything)


@pytest.mark.parametrize("text", [LONG, SURE])
def test_a_pair_read_by_sentence_is_looked_at_off_the_add_and_still_queued(
    encoder: _Encoder, text: str
) -> None:
    held = _Held()
    guard = _sentence_guard(held)
    old = guard.add(A, session_id="s").node
    assert old is not None
    (deferred,) = guard.detector.screen(text, session_id="s", defer=True)
    assert deferred.deferred and deferred.existing.id == old.id  # no look taken yet
    held.release.clear()
    result = guard.add(text, session_id="s")  # returns: its sentences are not read on the path
    assert result.decisions == () and result.second_look == (old.id,)
    assert not guard.settle(timeout=0.05)  # settled only once the deferred pair is judged
    assert guard.queue.items() == []
    held.release.set()
    assert guard.settle()
    closed = _sentence_guard()  # the same writes, every look taken inside the write
    closed.close()
    for written in (A, text):
        closed.add(written, session_id="s")
    queued = [(i.old_text, i.new_text, i.kind, i.reason) for i in guard.queue.items()]
    assert len(queued) == 1
    assert queued == [(i.old_text, i.new_text, i.kind, i.reason) for i in closed.queue.items()]


def test_an_add_asking_for_its_looks_now_decides_a_sentence_pair_inside_the_write(
    encoder: _Encoder,
) -> None:
    guard = _sentence_guard()
    old = guard.add(A, session_id="s").node
    assert old is not None
    result = guard.add(SURE, session_id="s", defer=False)  # as the agent's turn writes
    assert [(d.resolution, d.existing_id) for d in result.decisions] == [
        (Resolution.REVIEW, old.id)
    ]
    assert result.second_look == ()


def test_closing_the_guard_judges_a_deferred_pair_before_it_returns(encoder: _Encoder) -> None:
    held = _Held()
    guard = _sentence_guard(held)
    guard.add(A, session_id="s")
    held.release.clear()
    guard.add(LONG, session_id="s")
    closing = threading.Thread(target=guard.close)
    closing.start()
    closing.join(timeout=0.05)
    assert closing.is_alive()  # close waits for the deferred pair
    held.release.set()
    closing.join()
    assert len(guard.queue.items()) == 1


def test_a_scan_gives_open_pairs_their_second_look_together(encoder: _Encoder) -> None:
    guard = _guard()
    clock = guard.atlas.clock
    assert isinstance(clock, ManualClock)
    for text in (A, "The invoice is due on Friday.", B):
        guard.atlas.add(text, session_id="s")
        clock.advance(60.0)
    seen: list[tuple[int, int]] = []
    (item,) = guard.scan(progress=lambda done, total: seen.append((done, total)))
    assert item.reason.startswith("second look: cross-encoder p=0.97")
    assert (item.old_text, item.new_text) == (A, B)
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [set(pair) for pair in encoder.asked] == [{A, B}]  # once, from either side
