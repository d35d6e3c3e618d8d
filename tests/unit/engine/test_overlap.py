"""The helper thread that overlaps retrieval's two searches: results, errors, contention."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent import futures

import numpy as np
import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.engine import overlap, retrieval

from .conftest import build

needs_two_cores = pytest.mark.skipif(overlap._HELPER is None, reason="one core: nothing overlaps")


def _on_helper(record: list[int]) -> tuple[Callable[[], int], Callable[[], int]]:
    """A pair whose second piece waits (10 s at most: a guard, not a timing) until the
    first has started, so the first is not taken back by the caller."""
    started = threading.Event()

    def first() -> int:
        started.set()
        record.append(threading.get_ident())
        return threading.get_ident()

    def second() -> int:
        started.wait(10.0)
        return threading.get_ident()

    return first, second


@needs_two_cores
def test_first_runs_on_the_helper_second_here() -> None:
    here = threading.get_ident()
    first, second = overlap.both(*_on_helper([]))
    assert second == here
    assert first != here


def test_without_overlap_both_run_here_in_turn() -> None:
    order: list[tuple[str, int]] = []
    out = overlap.both(
        lambda: order.append(("first", threading.get_ident())) or 1,
        lambda: order.append(("second", threading.get_ident())) or 2,
        overlap=False,
    )
    here = threading.get_ident()
    assert out == (1, 2)
    assert order == [("first", here), ("second", here)]


@needs_two_cores
def test_the_helpers_work_is_finished_before_an_error_here_propagates() -> None:
    started, finished = threading.Event(), threading.Event()

    def first() -> None:
        started.set()
        finished.wait()  # held until the caller's piece has failed

    def second() -> None:
        started.wait()
        finished.set()
        raise ValueError("second failed")

    done: list[bool] = []

    def first_recording() -> None:
        first()
        done.append(True)

    with pytest.raises(ValueError, match="second failed"):
        overlap.both(first_recording, second)
    assert done == [True]


@needs_two_cores
def test_an_error_on_the_helper_propagates_and_frees_it() -> None:
    ran: list[int] = []
    first, second = _on_helper(ran)

    def failing() -> int:
        first()
        raise KeyError("first failed")

    with pytest.raises(KeyError, match="first failed"):
        overlap.both(failing, second)
    here = threading.get_ident()
    assert ran and ran[0] != here
    assert overlap.both(*_on_helper([]))[0] != here


@needs_two_cores
def test_a_caller_finding_the_helper_busy_does_both_itself() -> None:
    first, second = _on_helper([])

    def nested() -> tuple[int, int, int]:
        first()
        inner = overlap.both(threading.get_ident, threading.get_ident)
        return threading.get_ident(), *inner

    (helper, inner_first, inner_second), here = overlap.both(nested, second)
    assert inner_first == inner_second == helper != here


def _filled(seed: int) -> ElasticMemoryAtlas:
    """An HNSW atlas over two sessions, with tombstones."""
    atlas, clock = build(hnsw_threshold=64, link_threshold=0.99)
    rng = np.random.default_rng(seed)
    words = ["seat", "window", "coffee", "train", "berlin", "meeting", "tea", "dog", "flight"]
    ids = []
    for i in range(300):
        text = " ".join(rng.choice(words, 4)) + f" note {i}"
        ids.append(atlas.add(text, session_id="ab"[i % 2]).id)
        clock.advance(60.0)
    for memory_id in ids[::7]:
        atlas.delete(memory_id)
    return atlas


QUERIES = [("window seat on the train", "a"), ("coffee in berlin", "b"), ("dog flight tea", None)]


def _results(atlas: ElasticMemoryAtlas) -> list[tuple[list[float], ...]]:
    """Every query's ranking, straight from ``rank`` (a retrieve would reinforce)."""
    out = []
    for text, session in QUERIES:
        vector = atlas.embedder.embed([text])[0]
        for cross in (False, True):
            query = retrieval.Query(text, vector, 10, session, cross, None, None, None, None)
            ranked = retrieval.rank(atlas._s, query, atlas.clock.now())
            columns = (ranked.slots, ranked.final, ranked.dense, ranked.lexical, ranked.graph)
            out.append((*(c.tolist() for c in columns), ranked.sources))
    return out


def test_overlapped_retrieval_returns_what_the_serial_one_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    atlas = _filled(1)
    assert atlas._s.vectors.kind == "hnsw"
    monkeypatch.setattr(retrieval, "_overlaps", lambda state: False)
    serial = _results(atlas)
    monkeypatch.setattr(retrieval, "_overlaps", lambda state: True)
    assert _results(atlas) == serial
    assert any(serial)


def test_many_callers_on_several_atlases_get_the_serial_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    atlases = [_filled(2), _filled(3)]
    monkeypatch.setattr(retrieval, "_overlaps", lambda state: False)
    serial = [_results(a) for a in atlases]
    monkeypatch.setattr(retrieval, "_overlaps", lambda state: True)
    with futures.ThreadPoolExecutor(max_workers=6) as pool:
        runs = [pool.submit(_results, atlases[i % 2]) for i in range(24)]
        for i, run in enumerate(runs):
            assert run.result() == serial[i % 2]


@needs_two_cores
def test_a_piece_the_helper_has_not_started_is_run_by_the_caller() -> None:
    overlap.both(lambda: None, lambda: None)  # the helper thread exists
    helper = overlap._HELPER
    assert helper is not None and helper._executor is not None
    release = threading.Event()
    blocker = helper._executor.submit(release.wait)  # the helper is held elsewhere
    try:
        here = threading.get_ident()
        assert overlap.both(threading.get_ident, threading.get_ident) == (here, here)
    finally:
        release.set()
        blocker.result()


@needs_two_cores
def test_a_forked_child_gets_a_helper_of_its_own() -> None:
    overlap.both(*_on_helper([]))  # the parent's helper thread exists
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        first, here = overlap.both(*_on_helper([]))
        os.write(write, b"helper" if first != here else b"caller")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 16)
    os.close(read)
    os.waitpid(child, 0)
    assert answer == b"helper"


@needs_two_cores
def test_the_helpers_cpu_is_counted() -> None:
    before = overlap.helper_cpu_ns()
    first, second = _on_helper([])

    def busy() -> int:
        sum(range(200_000))
        return first()

    overlap.both(busy, second)
    assert overlap.helper_cpu_ns() > before
