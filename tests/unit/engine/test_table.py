"""NodeTable.snapshots: many memories at once, field for field what snapshot gives."""

from __future__ import annotations

import dataclasses

import numpy as np

from .conftest import AtlasFactory


def test_snapshots_equal_one_by_one_snapshots(make_atlas: AtlasFactory) -> None:
    atlas, clock = make_atlas(episode_after_memories=None)
    for i, word in enumerate(
        ["violin", "harbor", "copper", "meadow", "lantern", "orchid", "basalt"]
    ):
        atlas.add(
            f"the {word} story number {i}",
            session_id=f"s{i % 3}",
            metadata={"speaker": word} if i % 2 else None,
            ttl_hours=1.0 if i == 2 else None,
            pinned=i == 3,
            importance=0.1 * i,
        )
        clock.advance(10.0)
    atlas.retrieve("copper lantern", top_k=3)
    table, state = atlas._s.table, atlas._s
    slots = table.alive_slots()[::-1]
    many = table.snapshots(slots, state.session_names)
    one_by_one = [table.snapshot(int(s), state.session_of(int(s))) for s in slots]
    assert [dataclasses.astuple(n) for n in many] == [dataclasses.astuple(n) for n in one_by_one]
    assert {n.expires_at is None for n in many} == {True, False}
    assert all(type(n.weight) is float and type(n.access_count) is int for n in many)
    assert table.snapshots(np.empty(0, np.int64), state.session_names) == []
