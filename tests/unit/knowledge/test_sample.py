import json
from pathlib import Path

from memory_core.knowledge import ItemStatus, KnowledgeBase, load_sample_knowledge
from memory_core.knowledge.sample import sample_folder


def test_sample_loads_once_and_gives_the_audit_page_content(kb: KnowledgeBase) -> None:
    first = load_sample_knowledge(kb)
    second = load_sample_knowledge(kb)
    assert first.added_items == 8 and first.added_citations == 3 and first.skipped == 0
    assert (second.added_items, second.added_citations, second.skipped) == (0, 0, 8)
    with kb.unit() as unit:
        travel = {v.version: v.status for v in unit.items.versions("policy.travel")}
        leave = {v.version: v.status for v in unit.items.versions("policy.leave")}
        counts = unit.audit.status_counts()
        expired_cited = unit.audit.expired_but_cited()
        low = unit.audit.low_confidence()
        flagged = unit.feedback.flagged_citations()
    assert travel == {"3.1": ItemStatus.EXPIRED, "3.2": ItemStatus.ACTIVE}
    assert leave == {"3.1.0": ItemStatus.DEPRECATED, "3.1.2": ItemStatus.ACTIVE}
    assert counts[ItemStatus.PENDING_REVIEW] == 2
    assert [(i.key, i.version, n) for i, n in expired_cited] == [("policy.travel", "3.1", 1)]
    assert [i.key for i in low] == ["policy.reimbursement.deadline"]
    assert {c.item_key for c in flagged} == {"policy.travel", "policy.leave"}


def test_sample_retrieval_finds_current_travel_policy(kb: KnowledgeBase) -> None:
    load_sample_knowledge(kb)
    hits = kb.tier().lookup("Travel policy rail second-class ticket reimbursed", top_k=3)
    assert hits and hits[0].item.key == "policy.travel" and hits[0].item.version == "3.2"


def test_every_sample_version_has_two_versions_per_policy() -> None:
    doc = json.loads((sample_folder() / "knowledge.json").read_text(encoding="utf-8"))
    keys = [r["key"] for r in doc["items"]]
    assert keys.count("policy.travel") == 2 and keys.count("policy.leave") == 2
    assert Path(sample_folder() / "review_queue.csv").is_file()
