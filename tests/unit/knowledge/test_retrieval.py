from collections.abc import Callable

import numpy as np
import pytest

from memory_core.embedding import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.errors import InputError
from memory_core.knowledge import KnowledgeBase, KnowledgeFilter, SourceKind
from memory_core.knowledge.retrieval import KnowledgeTier

from .conftest import record

LEAVE = "annual leave days for employees after one year of service"
TRAVEL = "high speed rail ticket reimbursement cap for business trips"


@pytest.fixture
def kb(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    return make_kb(
        trusted_sources=frozenset({"HR_API", "Travel Handbook", "Wiki"}), min_similarity=0.0
    )


def _load(kb: KnowledgeBase, *records: dict[str, object]) -> list[str]:
    ids = []
    with kb.unit() as unit:
        for raw in records:
            item = unit.items.submit(raw).item
            assert item is not None
            ids.append(item.id)
    return ids


def test_only_items_valid_now_and_active_are_returned(kb: KnowledgeBase) -> None:
    _load(
        kb,
        record(key="leave.now", content=LEAVE),
        record(key="leave.old", content=LEAVE, expires_at="2025-01-01"),
        record(key="leave.future", content=LEAVE, effective_from="2026-01-01"),
        record(key="leave.pending", content=LEAVE, source_name="Unreviewed"),
    )
    hits = kb.tier().lookup(LEAVE, top_k=10)
    assert [h.item.key for h in hits] == ["leave.now"]


def test_validity_follows_the_clock(kb: KnowledgeBase, clock: ManualClock) -> None:
    _load(kb, record(key="leave.future", content=LEAVE, effective_from="2025-06-02"))
    assert kb.tier().lookup(LEAVE) == []
    clock.advance(86_400)
    assert [h.item.key for h in kb.tier().lookup(LEAVE)] == ["leave.future"]


def test_score_is_similarity_times_confidence_times_source_weight(
    kb: KnowledgeBase, embedder: HashingEmbedder
) -> None:
    _load(
        kb,
        record(key="a", content=LEAVE, confidence=0.5),
        record(
            key="b",
            content=LEAVE,
            confidence=0.9,
            source_name="Wiki",
            source_kind="second_party_document",
        ),
    )
    hits = kb.tier().lookup(LEAVE)
    assert [h.item.key for h in hits] == ["b", "a"]  # 0.9 * 0.8 = 0.72 > 0.5 * 1.0
    for hit in hits:
        assert hit.similarity == pytest.approx(1.0, abs=1e-5)
        expected = hit.similarity * hit.item.confidence * hit.source_weight
        assert hit.score == pytest.approx(expected, rel=1e-5)
    assert hits[0].source_weight == pytest.approx(0.8)


def test_explanation_names_match_source_version_confidence_date(kb: KnowledgeBase) -> None:
    _load(kb, record(content=LEAVE, version="3.1", confidence=0.99))
    (hit,) = kb.tier().lookup(LEAVE)
    assert hit.explanation.startswith(
        f"match {hit.similarity:.2f}, source HR_API v3.1, confidence 0.99, effective 2024-01-01"
    )


def test_filters_on_source_kind_version_and_key(kb: KnowledgeBase) -> None:
    _load(
        kb,
        record(key="a", content=LEAVE, version="1"),
        record(
            key="b",
            content=LEAVE,
            version="2",
            source_name="Travel Handbook",
            source_kind="second_party_document",
        ),
    )
    tier = kb.tier()
    assert [
        h.item.key
        for h in tier.lookup(LEAVE, flt=KnowledgeFilter(sources=frozenset({"Travel Handbook"})))
    ] == ["b"]
    assert [h.item.key for h in tier.lookup(LEAVE, flt=KnowledgeFilter(version="1"))] == ["a"]
    assert [
        h.item.key
        for h in tier.lookup(
            LEAVE, flt=KnowledgeFilter(kinds=frozenset({SourceKind.FIRST_PARTY_SYSTEM}))
        )
    ] == ["a"]
    assert [h.item.key for h in tier.lookup(LEAVE, flt=KnowledgeFilter(keys=frozenset({"b"})))] == [
        "b"
    ]


def test_min_similarity_drops_unrelated_items(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb(trusted_sources=frozenset({"HR_API"}), min_similarity=0.5)
    _load(kb, record(key="leave", content=LEAVE), record(key="travel", content=TRAVEL))
    assert [h.item.key for h in kb.tier().lookup(LEAVE, top_k=5)] == ["leave"]


def test_ranking_and_top_k(kb: KnowledgeBase) -> None:
    _load(
        kb,
        record(key="leave", content=LEAVE),
        record(key="travel", content=TRAVEL),
        record(key="mixed", content="annual leave and business trips"),
    )
    hits = kb.tier().lookup(LEAVE, top_k=2)
    assert [h.item.key for h in hits] == ["leave", "mixed"]
    assert hits[0].score >= hits[1].score


def test_query_vector_is_used_as_given(kb: KnowledgeBase, embedder: HashingEmbedder) -> None:
    _load(kb, record(key="leave", content=LEAVE), record(key="travel", content=TRAVEL))
    vec = embedder.embed([TRAVEL])[0] * 3.0  # not normalised: the tier normalises
    assert kb.tier().lookup("ignored text", vec, 1)[0].item.key == "travel"
    with pytest.raises(InputError, match="query_vec"):
        kb.tier().lookup("x", np.zeros(64, dtype=np.float32))
    with pytest.raises(InputError, match="top_k"):
        kb.tier().lookup(LEAVE, top_k=0)
    with pytest.raises(InputError, match="query_text"):
        kb.tier().lookup("  ")


def test_items_embedded_by_another_model_are_reembedded(
    kb: KnowledgeBase, database: object, clock: ManualClock
) -> None:
    _load(kb, record(key="leave", content=LEAVE))
    other = HashingEmbedder(dim=32)
    tier = KnowledgeTier(
        database.session,
        embedder=other,
        clock=clock,  # type: ignore[attr-defined]
        settings=kb.settings,
    )
    (hit,) = tier.lookup(LEAVE)
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)
    with kb.unit() as unit:
        row = unit.items.row(hit.item.id)
        assert row.embedding_model == "hashing-32" and len(row.embedding or b"") == 32 * 4


def test_empty_knowledge_base_returns_nothing(kb: KnowledgeBase) -> None:
    assert kb.tier().lookup(LEAVE) == []


def test_vector_cache_reads_each_vector_once_and_keeps_order(
    kb: KnowledgeBase, database: object, embedder: HashingEmbedder
) -> None:
    from sqlalchemy import event

    from memory_core.knowledge.retrieval import VectorCache

    texts = [f"rule number {i} about topic {i % 7}" for i in range(70)]  # grows past 64 rows
    ids = _load(kb, *(record(key=f"k{i}", content=t) for i, t in enumerate(texts)))
    cache = VectorCache(embedder.dim)
    engine = database.engine  # type: ignore[attr-defined]
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with database.session() as session:  # type: ignore[attr-defined]
        first = cache.rows(session, ids[::-1])
        reads = len(statements)
        again = cache.rows(session, ids[::-1])
    assert len(statements) == reads  # second call served from memory
    assert len(cache) == 70
    assert np.allclose(first, embedder.embed(texts[::-1]), atol=1e-6)
    assert np.array_equal(first, again)
    cache.clear()
    assert len(cache) == 0
