"""Families of templated lines (issue #25): novelty, no reinforcement by repetition,
folding into one summary with ranges and provenance, and the index kept in step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import ElasticMemoryAtlas, HashingEmbedder, MemoryKind
from memory_core.engine.apply import apply_events, recording
from memory_core.engine.events import AtlasEvent
from memory_core.engine.families import (
    _ID,
    _NUMBER,
    _TIMESTAMP,
    ID_MARK,
    KEY_SEPARATOR,
    NUMBER_MARK,
    FamilyIndex,
    build_index,
    family_key,
    novelty,
    summary_text,
    template,
)
from memory_core.testing import atlas_differences

from .conftest import DIM, AtlasFactory


def status(n: int) -> str:
    return f"Status update {n}: the nightly build number {n} finished with {n % 7} warnings."


def test_lines_differing_in_numbers_ids_and_times_share_a_template() -> None:
    a, numbers = template("2026-01-02T08:03:24Z job 4f9a2c81 took 143 ms (3 retries)")
    b, _ = template("2026-01-05T23:59:01Z job 0c77e1d2 took 9 ms (0 retries)")
    assert a == b == "<id> job <id> took <n> ms (<n> retries)"
    assert numbers == [143.0, 3.0]
    assert template("The user likes tea")[0] != template("The user likes coffee")[0]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Deb",
                "said",
                "ok",
                "-",
                "abcdefab-abcd-abcd-abcd-abcdefabcdef",
                "7",
                "12:30",
                "x9f3k2",
                "٣",
                "Ünïcode",
                "node-7",
                "+4",
                "\t",
            ]
        ),
        max_size=12,
    ).map(" ".join)
)
def test_a_line_without_digits_or_hyphens_keys_as_the_masks_would(text: str) -> None:
    """The masks are skipped where they cannot match: the key is the same as through them."""
    masked = _ID.sub(ID_MARK, _TIMESTAMP.sub(ID_MARK, text))
    full = " ".join(_NUMBER.sub(NUMBER_MARK, masked).lower().split())
    assert family_key(3, text) == f"3{KEY_SEPARATOR}{full}"
    assert template(text)[0] == full


def test_novelty_keeps_two_lines_whole_then_shrinks() -> None:
    assert [round(novelty(seen), 3) for seen in range(6)] == [1.0, 1.0, 0.667, 0.5, 0.4, 0.333]


def test_summary_text_shows_the_range_of_every_number_that_varied() -> None:
    lines = [status(n) for n in range(17, 167)]
    text = summary_text(lines, [template(t)[1] for t in lines], len(lines))
    assert text == (
        "150 similar lines: Status update 17–166: the nightly build number 17–166 finished "
        "with 0–6 warnings."
    )


def test_a_flood_folds_into_one_summary_and_a_fact_said_once_outlives_it(
    make_atlas: AtlasFactory,
) -> None:
    atlas, clock = make_atlas(max_nodes=20, family_fold_at=8)
    fact = atlas.add("The user is allergic to penicillin", session_id="s", provenance=("fact",))
    for n in range(17, 167):
        clock.advance(30)
        atlas.add(status(n), session_id="s", provenance=(f"line-{n}",))
    assert fact.id in atlas
    summaries = [n for n in atlas.nodes() if n.kind is MemoryKind.SUMMARY]
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary.metadata["type"] == "family" and summary.metadata["lines"] >= 140
    assert summary.content.startswith(f"{summary.metadata['lines']} similar lines: Status update")
    assert "warnings" in summary.content and "0–6 warnings" in summary.content
    lines = [n for n in atlas.nodes() if n.kind is MemoryKind.SESSION and n.id != fact.id]
    assert len(lines) < 8  # the newest few, the rest folded
    carried = {p for n in [summary, *lines] for p in n.provenance}
    assert {f"line-{n}" for n in range(17, 167)} <= carried  # nothing lost, only folded
    assert atlas.stats()["evicted"].get("capacity", 0) == 0


def test_later_lines_of_a_family_start_weaker(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=None, family_fold_at=None, merge_threshold=1.0)
    nodes = [atlas.add(status(n), session_id="s") for n in range(10)]
    importances = [n.importance for n in nodes]
    assert abs(importances[0] - importances[1]) < 0.05  # the first two count fully
    assert importances[1] > importances[2] > importances[5] > importances[9]
    assert importances[9] < 0.25 * importances[0]
    other = atlas.add(status(11), session_id="other")  # families never span sessions
    assert other.importance == importances[0] or other.importance > importances[2]
    given = atlas.add(status(12), session_id="s", importance=0.9)
    assert given.importance == pytest.approx(0.9)  # a caller's importance is kept as given


def test_a_repeated_line_merges_without_gaining_weight(make_atlas: AtlasFactory) -> None:
    atlas, _ = make_atlas(max_nodes=None)
    first = atlas.add("ok thanks", session_id="s")
    for _ in range(30):
        atlas.add("ok thanks", session_id="s")
    held = atlas.get(first.id)
    assert len(atlas) == 1 and held.metadata["merged_count"] == 30
    assert held.access_count <= 2  # the first repeats count, a flood of them does not
    assert held.weight < 1.2 * first.weight


def test_the_index_follows_removals_and_rebuilds_after_a_snapshot(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, clock = make_atlas(max_nodes=None, family_fold_at=6)
    for n in range(20):
        clock.advance(30)
        atlas.add(status(n), session_id="s", provenance=(f"line-{n}",))
    atlas.add("heartbeat from node-1: ok", session_id="t")
    index = atlas._s.families
    live = set(atlas._s.table.alive_slots().tolist())
    for family in index.all():
        assert set(family.members) <= live and len(family.members) == family.size
        assert family.summary is None or family.summary in live
    path = atlas.save_snapshot(tmp_path / "a.npz")
    restored = ElasticMemoryAtlas.load_snapshot(path, embedder=HashingEmbedder(DIM))
    rebuilt = build_index(restored._s)
    key = family_key(atlas._s.sessions["s"].code, status(0))
    assert rebuilt.get(key).summary is not None
    assert len(rebuilt.get(key).members) == len(index.get(key).members) > 0
    atlas.end_session("s", mode="purge")
    assert not index.get(key).members and index.get(key).summary is None


def test_a_follower_copies_the_folds_exactly(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(max_nodes=30, family_fold_at=5)
    events: list[AtlasEvent] = []
    atlas.subscribe(recording(atlas, events.append))
    copy = ElasticMemoryAtlas(atlas.config, embedder=HashingEmbedder(DIM))
    atlas.add("The user is allergic to penicillin", session_id="s")
    for n in range(60):
        clock.advance(30)
        atlas.add(status(n), session_id="s")
    assert any(e.type == "summary" for e in events)
    apply_events(copy, events)
    assert atlas_differences(atlas, copy) == []
    assert np.isfinite([n.weight for n in copy.nodes()]).all()


def test_the_index_keeps_members_in_order_through_removals_and_growth() -> None:
    index = FamilyIndex()
    lines = {f"k{n % 3}": [] for n in range(3)}  # three families, 40 slots each
    for slot in range(120):
        key = f"k{slot % 3}"
        index.add_member(key, slot * 7)  # slots far beyond the columns' first size
        lines[key].append(slot * 7)
    index.set_summary("k0", 900)
    gone = [0, 21 * 7, 119 * 7, 900, 5000]  # first, middle, last, the summary, no family
    index.discard(np.array(gone))
    for key, slots in lines.items():
        family = index.get(key)
        kept = [s for s in slots if s not in gone]
        assert family.members == kept and family.size == len(kept)
        assert family.summary is None
    assert len(index) == 3 and index.get("new").members == [] and len(index) == 4
    family = index.get("k1")
    family.seen += 2
    family.importance = max(family.importance, 0.25)
    assert (index.get("k1").seen, index.get("k1").importance) == (2, 0.25)
