"""Real MiniLM over the shipped sample: paraphrased questions find the right policy version."""

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core.embedding import MiniLMEmbedder
from memory_core.engine.clock import ManualClock
from memory_core.knowledge import KnowledgeBase, load_sample_knowledge
from memory_core.store.engine import open_database

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    path: Path = tmp_path_factory.mktemp("kb") / "atlas.db"
    db = open_database(f"sqlite:///{path}")
    base = KnowledgeBase(
        db.session, embedder=MiniLMEmbedder(), clock=ManualClock(datetime(2025, 6, 1, tzinfo=UTC))
    )
    load_sample_knowledge(base)
    yield base
    db.close()


@pytest.mark.parametrize(
    ("question", "key", "version"),
    [
        ("How many vacation days do I get each year?", "policy.leave", "3.1.2"),
        ("What is the most I can claim for a train fare on a work trip?", "policy.travel", "3.2"),
        (
            "How much money can I spend on food per day when travelling?",
            "policy.expense.meals",
            "2.0",
        ),
        (
            "Until when can I hand in my receipts after a journey?",
            "policy.reimbursement.deadline",
            "1.0",
        ),
    ],
)
def test_paraphrased_question_ranks_the_right_policy_first(
    kb: KnowledgeBase, question: str, key: str, version: str
) -> None:
    hits = kb.tier().lookup(question, top_k=3)
    assert hits, question
    top = hits[0]
    assert (top.item.key, top.item.version) == (key, version), [h.explanation for h in hits]
    assert top.explanation.startswith(f"match {top.similarity:.2f}, source {top.item.label}")


def test_expired_version_never_answers_even_when_it_matches_best(kb: KnowledgeBase) -> None:
    # the words of the expired v3.1 text; v3.2 differs only in the amount
    question = "high-speed rail reimbursed up to 500 CNY per one-way second-class ticket"
    versions = [
        h.item.version for h in kb.tier().lookup(question, top_k=5) if h.item.key == "policy.travel"
    ]
    assert versions == ["3.2"]
