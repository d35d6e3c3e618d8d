"""Eight threads, ten thousand mixed operations on one atlas: no exception, invariants hold.

Operations are drawn per thread from a seeded generator: add, add_many, retrieve (own
session, cross-session), decay, merge_duplicates, end_session in every mode, pin,
forget, link, stats and nodes. Threads also advance the shared clock, so automatic
decay passes and expiry race with everything else.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.errors import NotFoundError
from tests.unit.engine.conftest import invariants

from .conftest import build

THREADS = 8
OPERATIONS = 10_000
MAX_NODES = 400
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
]
WEIGHTS = {
    "add": 30,
    "add_many": 4,
    "retrieve": 30,
    "retrieve_cross": 8,
    "decay": 4,
    "merge": 4,
    "end_session": 3,
    "pin": 4,
    "forget": 4,
    "link": 5,
    "stats": 4,
}
MODES = ("keep", "fade", "summarize", "purge")


def _text(rng: random.Random, worker: int, i: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
    return f"{words} note {worker}-{i}" if rng.random() < 0.8 else words  # some duplicates


def _worker(
    atlas: ElasticMemoryAtlas,
    clock: object,
    worker: int,
    count: int,
    done: Counter[str],
    errors: list[BaseException],
    lock: threading.Lock,
) -> None:
    rng = random.Random(worker)
    names, weights = list(WEIGHTS), list(WEIGHTS.values())
    local: Counter[str] = Counter()
    try:
        for i in range(count):
            op = rng.choices(names, weights)[0]
            session = f"s{rng.randrange(6)}"
            if op == "add":
                atlas.add(_text(rng, worker, i), session_id=session, pinned=rng.random() < 0.02)
            elif op == "add_many":
                atlas.add_many([_text(rng, worker, i) for _ in range(3)], session_id=session)
            elif op == "retrieve":
                for hit in atlas.retrieve(_text(rng, worker, i), top_k=5, session_id=session):
                    assert hit.node.session_id == session
            elif op == "retrieve_cross":
                atlas.retrieve(
                    _text(rng, worker, i), top_k=5, session_id=session, cross_session=True
                )
            elif op == "decay":
                clock.advance(rng.uniform(0, 1800))  # type: ignore[attr-defined]
                atlas.decay()
            elif op == "merge":
                try:
                    atlas.merge_duplicates(session if rng.random() < 0.5 else None)
                except NotFoundError:  # that session was purged (or never started)
                    local["merge_missing"] += 1
            elif op == "end_session":
                try:
                    atlas.end_session(session, mode=rng.choice(MODES))
                except NotFoundError:  # another thread purged it first
                    local["end_session_missing"] += 1
            elif op in ("pin", "forget", "link"):
                nodes = atlas.nodes()
                if len(nodes) < 2:
                    continue
                a, b = rng.sample(nodes, 2)
                try:
                    if op == "pin":
                        atlas.pin(a.id, rng.random() < 0.5)
                    elif op == "forget":
                        atlas.forget(a.id)
                    else:
                        atlas.link(a.id, b.id, strength=rng.random())
                except NotFoundError:  # evicted between nodes() and the call: allowed
                    local[f"{op}_raced"] += 1
            else:
                stats = atlas.stats()
                assert stats["nodes"] <= MAX_NODES
            local[op] += 1
    except BaseException as exc:
        errors.append(exc)
    with lock:
        done.update(local)


@pytest.mark.slow
@pytest.mark.parametrize("hnsw_threshold", [20_000, 100], ids=["exact", "hnsw"])
def test_eight_threads_ten_thousand_operations_keep_invariants(hnsw_threshold: int) -> None:
    """Also over an HNSW index, which the workers grow, search, delete from and rebuild."""
    atlas, clock = build(
        hnsw_threshold=hnsw_threshold,
        max_nodes=MAX_NODES,
        working_memory_size=4,
        decay_interval_seconds=900,
        merge_threshold=0.97,
        link_threshold=0.5,
        orphan_grace_hours=0.5,
    )
    done: Counter[str] = Counter()
    errors: list[BaseException] = []
    lock = threading.Lock()
    per_thread = OPERATIONS // THREADS
    threads = [
        threading.Thread(target=_worker, args=(atlas, clock, w, per_thread, done, errors, lock))
        for w in range(THREADS)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    elapsed = time.perf_counter() - started
    assert not any(t.is_alive() for t in threads), "a worker hung (deadlock?)"
    assert errors == [], errors[:3]
    attempted = sum(v for k, v in done.items() if not k.endswith(("_raced", "_missing")))
    skipped_small = OPERATIONS - attempted  # pin/forget/link with fewer than 2 memories
    assert attempted + skipped_small == OPERATIONS and skipped_small < OPERATIONS // 100
    invariants(atlas)
    assert (atlas._s.vectors.kind == "hnsw") == (hnsw_threshold == 100)
    stats = atlas.stats()
    assert len(atlas) == stats["nodes"] <= MAX_NODES
    assert stats["decay_passes"] >= done["decay"]
    for op in WEIGHTS:
        assert done[op] > 0, f"{op} never ran"
    print(  # the numbers docs/reliability.md quotes
        f"\nstress: {attempted} operations by {THREADS} threads in {elapsed:.1f}s; "
        f"{dict(sorted(done.items()))}; final {stats['nodes']} nodes, {stats['edges']} edges, "
        f"added {stats['added']}, merged {stats['merged']}, evicted {stats['evicted_total']}"
    )
    assert elapsed < 60
