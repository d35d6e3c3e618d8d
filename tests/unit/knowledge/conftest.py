"""Fixtures: a migrated SQLite file per test, a manual clock, the hashing embedder."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory_core.embedding import HashingEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.knowledge import KnowledgeBase, KnowledgeSettings
from memory_core.knowledge.items import Checklist, ItemStatus, KnowledgeItem, SourceKind
from memory_core.store.engine import Database, open_database

START = datetime(2025, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database migrated to head; each test works on a copy (migrating is the slow part)."""
    path = tmp_path_factory.mktemp("template") / "knowledge.db"
    open_database(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def database(tmp_path: Path, migrated_template: Path) -> Iterator[Database]:
    path = tmp_path / "knowledge.db"
    shutil.copyfile(migrated_template, path)
    db = open_database(f"sqlite:///{path}")  # at head already: the upgrade is a no-op
    yield db
    db.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dim=64)


@pytest.fixture
def make_kb(
    database: Database, clock: ManualClock, embedder: HashingEmbedder
) -> Callable[..., KnowledgeBase]:
    def make(**settings: Any) -> KnowledgeBase:
        return KnowledgeBase(
            database.session, embedder=embedder, clock=clock, settings=KnowledgeSettings(**settings)
        )

    return make


@pytest.fixture
def kb(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    return make_kb()


def record(**overrides: Any) -> dict[str, Any]:
    """A valid item mapping; override any field."""
    base: dict[str, Any] = {
        "key": "policy.leave",
        "content": "Employees with one full year of service get 5 days of annual leave.",
        "source_kind": "first_party_system",
        "source_name": "HR_API",
        "version": "3.1",
        "effective_from": "2024-01-01",
        "confidence": 0.99,
    }
    base.update(overrides)
    return base


def stored_item(**overrides: Any) -> KnowledgeItem:
    """An active item version as the repository returns it; override any field."""
    base: dict[str, Any] = {
        "id": "p",
        "key": "policy.leave",
        "version": "1",
        "content": "old",
        "source_kind": SourceKind.FIRST_PARTY_SYSTEM,
        "source_name": "HR_API",
        "effective_from": START,
        "expires_at": None,
        "confidence": 1.0,
        "status": ItemStatus.ACTIVE,
        "checklist": Checklist(),
        "data": None,
        "last_verified_at": None,
        "citation_count": 0,
        "feedback_correct": 0,
        "feedback_wrong": 0,
        "consecutive_wrong": 0,
        "reviewer": None,
        "review_note": None,
        "created_at": START,
        "updated_at": START,
        "session_id": None,
        "user_id": None,
    }
    base.update(overrides)
    return KnowledgeItem(**base)
