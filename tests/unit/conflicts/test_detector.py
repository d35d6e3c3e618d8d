"""ConflictDetector: candidates from the atlas within one scope, judged; allow-list; scans."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.conflicts import make_judge
from memory_core.conflicts.detector import ConflictDetector, DetectorConfig
from memory_core.conflicts.items import pair_key
from memory_core.engine.model import MemoryStatus
from memory_core.errors import ConfigError, InputError, NotFoundError

OLD = "The budget is 5000 euros."
NEW = "The budget is now 6000 euros."


def detector(atlas: ElasticMemoryAtlas, **config: Any) -> ConflictDetector:
    return ConflictDetector(atlas, make_judge(), DetectorConfig(**config))


def test_finds_the_stored_memory_a_statement_contradicts(atlas: ElasticMemoryAtlas) -> None:
    old = atlas.add(OLD, session_id="s1")
    atlas.add("I walk the dog every morning.", session_id="s1")
    found = detector(atlas).check(NEW, session_id="s1")
    assert [c.existing.id for c in found] == [old.id]
    assert found[0].verdict.kind == "value_change"
    assert 0.3 <= found[0].similarity <= 1.0
    assert {s.side for s in found[0].verdict.spans} == {"a", "b"}  # a = stored, b = new


def test_compatible_and_unrelated_statements_are_not_conflicts(atlas: ElasticMemoryAtlas) -> None:
    atlas.add(OLD, session_id="s1")
    d = detector(atlas)
    assert d.check("The budget is 5000 euros and covers travel.", session_id="s1") == []
    assert d.check("My cat is called Mochi.", session_id="s1") == []


def test_empty_atlas_has_no_conflicts(atlas: ElasticMemoryAtlas) -> None:
    assert detector(atlas).check(NEW, session_id="s1") == []


def test_session_scope_ignores_other_sessions_user_scope_does_not(
    atlas: ElasticMemoryAtlas,
) -> None:
    atlas.add(OLD, session_id="s1", metadata={"user_id": "ana"})
    ana = {"user_id": "ana"}
    assert detector(atlas, scope="session").check(NEW, session_id="s2", metadata=ana) == []
    assert len(detector(atlas, scope="user").check(NEW, session_id="s2", metadata=ana)) == 1


def test_user_scope_is_narrowed_to_the_writers_user_id(atlas: ElasticMemoryAtlas) -> None:
    atlas.add(OLD, session_id="s1", metadata={"user_id": "ana"})
    d = detector(atlas)
    assert d.check(NEW, session_id="s2", metadata={"user_id": "bo"}) == []
    assert len(d.check(NEW, session_id="s2", metadata={"user_id": "ana"})) == 1


def test_candidates_below_min_similarity_are_not_judged(atlas: ElasticMemoryAtlas) -> None:
    atlas.add(OLD, session_id="s1")
    assert detector(atlas, min_similarity=0.99).check(NEW, session_id="s1") == []


def test_allowed_pairs_are_skipped(atlas: ElasticMemoryAtlas) -> None:
    atlas.add(OLD, session_id="s1")
    allowed = {pair_key(NEW, OLD)}
    d = ConflictDetector(atlas, make_judge(), allowed=allowed.__contains__)
    assert d.check(NEW, session_id="s1") == []
    assert len(d.check("The budget is now 7000 euros.", session_id="s1")) == 1


def test_inactive_memories_are_never_candidates(atlas: ElasticMemoryAtlas) -> None:
    old = atlas.add(OLD, session_id="s1")
    atlas.set_status(old.id, MemoryStatus.SUPERSEDED)
    assert detector(atlas).check(NEW, session_id="s1") == []


def test_checking_reinforces_nothing(atlas: ElasticMemoryAtlas) -> None:
    old = atlas.add(OLD, session_id="s1")
    detector(atlas).check(NEW, session_id="s1")
    after = atlas.get(old.id)
    assert after.access_count == 0
    assert after.weight == pytest.approx(old.weight)


def test_scan_of_a_stored_memory_finds_its_contradiction(atlas: ElasticMemoryAtlas) -> None:
    old = atlas.add(OLD, session_id="s1")
    new = atlas.add(NEW, session_id="s1")
    found = detector(atlas).scan(new.id)
    assert [c.existing.id for c in found] == [old.id]
    with pytest.raises(NotFoundError):
        detector(atlas).scan("m-missing")


def test_a_summary_is_scanned_through_the_memories_it_quotes(atlas: ElasticMemoryAtlas) -> None:
    old = atlas.add(OLD, session_id="s1", metadata={"user_id": "ana"})
    atlas.add("My dog is called Biscuit.", session_id="s1", metadata={"user_id": "ana"})
    summary = atlas.summarize_session("s1")
    assert summary is not None and OLD.rstrip(".") in summary.content
    d = detector(atlas)
    assert d.scan(summary.id) == []  # never judged against its own sources
    new = atlas.add(NEW, session_id="s2", metadata={"user_id": "ana"})
    found = d.scan(new.id)
    assert [c.existing.id for c in found] == [old.id]  # the quoted memory, not the summary


def test_similar_is_read_only_sorted_and_excludes_itself(atlas: ElasticMemoryAtlas) -> None:
    a = atlas.add(OLD, session_id="s1")
    b = atlas.add(NEW, session_id="s1")
    c = atlas.add("The budget is 5000 euros for hotels.", session_id="s2")
    near = atlas.similar(a.id, 5)
    assert [n.id for n, _ in near] == [b.id]
    both = atlas.similar(a.id, 5, cross_session=True)
    assert {n.id for n, _ in both} == {b.id, c.id}
    sims = [s for _, s in both]
    assert sims == sorted(sims, reverse=True)
    assert atlas.get(b.id).access_count == 0
    with pytest.raises(InputError, match="k"):
        atlas.similar(a.id, 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [("candidates", 0), ("candidates", True), ("min_similarity", 2.0), ("scope", "galaxy")],
)
def test_bad_config_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        DetectorConfig(**{field: value})  # type: ignore[arg-type]
