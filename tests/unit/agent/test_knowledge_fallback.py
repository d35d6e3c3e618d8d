"""The agent consults verified knowledge only when its memory has no good answer."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from memory_core import AtlasConfig, ElasticMemoryAtlas
from memory_core.agent import AgentSettings, MemoryAgent
from memory_core.agent.context import estimate_tokens
from memory_core.agent.knowledge_fallback import (
    KNOWLEDGE_HEADER,
    KnowledgeFallback,
    best_match,
    knowledge_context,
)
from memory_core.errors import InputError, StoreUnavailableError
from memory_core.knowledge import ItemStatus, KnowledgeBase, KnowledgeFilter, KnowledgeSettings
from memory_core.store.engine import Database, open_database
from memory_core.testing import HashingEmbedder, ManualClock

START = datetime(2025, 6, 1, tzinfo=UTC)
LEAVE = "Employees with one full year of service get 5 days of annual leave."
QUESTION = "how many days of annual leave do employees get"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kb") / "knowledge.db"
    open_database(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def database(tmp_path: Path, template: Path) -> Iterator[Database]:
    path = tmp_path / "knowledge.db"
    shutil.copyfile(template, path)
    db = open_database(f"sqlite:///{path}")
    yield db
    db.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def kb(database: Database, clock: ManualClock) -> KnowledgeBase:
    kb = KnowledgeBase(
        database.session,
        embedder=HashingEmbedder(64),
        clock=clock,
        settings=KnowledgeSettings(trusted_sources=frozenset({"HR_API"})),
    )
    with kb.unit() as unit:
        unit.items.submit(item(content=LEAVE))
    return kb


def item(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "key": "policy.leave",
        "content": LEAVE,
        "source_kind": "first_party_system",
        "source_name": "HR_API",
        "version": "3.1",
        "effective_from": "2024-01-01",
        "confidence": 0.99,
    }
    return base | overrides


def agent(kb: KnowledgeBase, clock: ManualClock, **settings: Any) -> MemoryAgent:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(64), clock=clock)
    return MemoryAgent(
        atlas,
        session_id="s1",
        settings=AgentSettings(**{"remember": "everything", **settings}),
        knowledge=KnowledgeFallback(kb),
    )


def citations(kb: KnowledgeBase) -> list[tuple[str, str | None, str]]:
    with kb.unit() as unit:
        (leave,) = unit.items.items(key="policy.leave", status=ItemStatus.ACTIVE)
        return [
            (c.cited_by_id, c.session_id, c.item_version) for c in unit.feedback.citations(leave.id)
        ]


def test_empty_memory_falls_back_and_cites_the_stored_memory(
    kb: KnowledgeBase, clock: ManualClock
) -> None:
    a = agent(kb, clock)
    step = a.step(QUESTION)
    assert [h.item.key for h in step.knowledge] == ["policy.leave"]
    assert KNOWLEDGE_HEADER in step.context
    assert LEAVE in step.context
    assert "source HR_API v3.1, confidence 0.99, effective 2024-01-01" in step.context
    assert step.response is not None and LEAVE in step.response  # the responder saw it
    assert step.stored is not None
    assert citations(kb) == [(step.stored.id, "s1", "3.1")]


def test_a_good_memory_match_skips_the_knowledge_tier(
    kb: KnowledgeBase, clock: ManualClock
) -> None:
    a = agent(kb, clock, top_k=1)
    a.step(QUESTION)  # remembered; the next identical question matches it exactly
    step = a.step(QUESTION)
    assert best_match(step.retrieved) == pytest.approx(1.0, abs=1e-5)
    assert step.knowledge == []
    assert KNOWLEDGE_HEADER not in step.context
    assert len(citations(kb)) == 1  # only the first turn's


def test_weak_best_match_consults_even_with_enough_hits(
    kb: KnowledgeBase, clock: ManualClock
) -> None:
    a = agent(kb, clock, top_k=1)
    a.step("the weather in Lisbon was sunny on the trip")
    step = a.step(QUESTION)
    assert len(step.retrieved) == 1
    assert best_match(step.retrieved) < a.knowledge.min_match  # type: ignore[union-attr]
    assert [h.item.key for h in step.knowledge] == ["policy.leave"]


def test_fewer_hits_than_top_k_consults(kb: KnowledgeBase, clock: ManualClock) -> None:
    a = agent(kb, clock, top_k=3)
    a.step(QUESTION)
    step = a.step(QUESTION)
    assert 0 < len(step.retrieved) < 3
    assert step.knowledge and step.knowledge[0].item.key == "policy.leave"


def test_nothing_remembered_cites_the_session(kb: KnowledgeBase, clock: ManualClock) -> None:
    a = agent(kb, clock, remember=lambda text, meta: False)
    step = a.step(QUESTION)
    assert step.stored is None and step.knowledge
    assert citations(kb) == [("s1", "s1", "3.1")]


def test_a_new_version_flags_the_memory_that_cited_the_old_one(
    kb: KnowledgeBase, clock: ManualClock
) -> None:
    step = agent(kb, clock).step(QUESTION)
    assert step.stored is not None
    with kb.unit() as unit:
        unit.items.submit(item(version="3.2", content=LEAVE.replace("5 days", "7 days")))
        flagged = unit.feedback.flagged_citations()
    assert [(c.cited_by_id, c.item_version) for c in flagged] == [(step.stored.id, "3.1")]


def test_expired_knowledge_never_reaches_the_context(kb: KnowledgeBase, clock: ManualClock) -> None:
    with kb.unit() as unit:
        (leave,) = unit.items.items(key="policy.leave")
        unit.items.expire(leave.id, reviewer="alice")
    step = agent(kb, clock).step(QUESTION)
    assert step.knowledge == []
    assert KNOWLEDGE_HEADER not in step.context


def test_filter_limits_which_knowledge_answers(kb: KnowledgeBase, clock: ManualClock) -> None:
    a = agent(kb, clock)
    a.knowledge = KnowledgeFallback(kb, flt=KnowledgeFilter(sources=frozenset({"Team Wiki"})))
    assert a.step(QUESTION).knowledge == []


def test_knowledge_and_memories_share_the_token_budget(
    kb: KnowledgeBase, clock: ManualClock
) -> None:
    a = agent(kb, clock, token_budget=100, top_k=4)
    for text in ["alpha note one about leave", "beta note two", "gamma note three"]:
        a.step(text)
    step = a.step(QUESTION)
    assert step.knowledge and "- alpha note one about leave" in step.context
    assert step.context_tokens <= 100 + 1  # the joining newline may round up
    chosen, block = knowledge_context(step.knowledge, 10)
    assert chosen == [] and block == ""  # one line alone is longer than 10 tokens
    chosen, block = knowledge_context(step.knowledge, 200)
    assert block.startswith(KNOWLEDGE_HEADER) and estimate_tokens(block) <= 200


def test_store_failure_costs_the_fallback_not_the_turn(
    kb: KnowledgeBase, clock: ManualClock, database: Database
) -> None:
    @contextmanager
    def broken(action: str) -> Iterator[Session]:
        raise StoreUnavailableError(f"{action}: database is down")
        yield  # pragma: no cover

    down = KnowledgeBase(broken, embedder=HashingEmbedder(64), clock=clock)
    a = agent(kb, clock)
    a.knowledge = KnowledgeFallback(down)
    step = a.step(QUESTION)
    assert step.knowledge == [] and step.response is not None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"min_match": 1.5}, "min_match"), ({"min_match": "x"}, "min_match"), ({"top_k": 0}, "top_k")],
)
def test_bad_settings_name_the_field(kb: KnowledgeBase, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError, match=field):
        KnowledgeFallback(kb, **kwargs)


def test_without_knowledge_the_loop_is_unchanged(clock: ManualClock) -> None:
    atlas = ElasticMemoryAtlas(AtlasConfig(), embedder=HashingEmbedder(64), clock=clock)
    step = MemoryAgent(atlas, session_id="s1").step(QUESTION)
    assert step.knowledge == [] and step.context == ""
