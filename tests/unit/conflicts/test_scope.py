"""The guard's scope: other sessions are compared only through the same user's memories.

A memory that names no user belongs to its session alone, both ways: a write without a
user is compared with its own session only, and a memory without a user is never a
candidate for another session's write. Each rule is checked on writes, scans and forget
requests.
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_core import ElasticMemoryAtlas
from memory_core.conflicts.guard import ConflictGuard
from memory_core.engine.model import MemoryStatus

OLD = "The trip budget cap is 4,000 euros."
NEW = "The trip budget cap is 5,000 euros."
ANA, BO = {"user_id": "ana"}, {"user_id": "bo"}


def statuses(atlas: ElasticMemoryAtlas, node_id: str) -> MemoryStatus:
    return atlas.get(node_id).status


def test_same_user_across_sessions_is_compared(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any
) -> None:
    old = atlas.add(OLD, session_id="demo", metadata=ANA)
    tick(atlas)
    result = guard.add(NEW, session_id="review", metadata=ANA)
    assert [d.existing_id for d in result.decisions] == [old.id]


@pytest.mark.parametrize(
    ("old_meta", "new_meta"),
    [(ANA, BO), (None, None), (None, ANA), (ANA, None)],
    ids=["different-users", "no-user-either", "old-without-user", "new-without-user"],
)
def test_other_sessions_are_not_compared_without_a_shared_user(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any, old_meta: Any, new_meta: Any
) -> None:
    old = atlas.add(OLD, session_id="demo", metadata=old_meta)
    tick(atlas)
    result = guard.add(NEW, session_id="review", metadata=new_meta)
    assert result.decisions == ()
    assert statuses(atlas, old.id) is MemoryStatus.ACTIVE


@pytest.mark.parametrize("new_meta", [None, ANA], ids=["no-user", "with-user"])
def test_a_memory_without_user_is_compared_within_its_own_session(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any, new_meta: Any
) -> None:
    old = atlas.add(OLD, session_id="review")
    tick(atlas)
    result = guard.add(NEW, session_id="review", metadata=new_meta)
    assert [d.existing_id for d in result.decisions] == [old.id]


def test_a_scan_pairs_other_sessions_only_through_the_same_user(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any
) -> None:
    atlas.add(OLD, session_id="demo")  # no user: its session alone
    tick(atlas)
    atlas.add(NEW, session_id="review")
    assert guard.scan() == []
    atlas.add(OLD, session_id="s1", metadata=ANA)
    tick(atlas)
    atlas.add(NEW, session_id="s2", metadata=ANA)
    atlas.add("The trip budget cap is 9,000 euros.", session_id="s3", metadata=BO)
    pairs = {(i.old_session_id, i.session_id) for i in guard.scan()}
    assert pairs == {("s1", "s2")}


def test_forget_without_user_reaches_only_its_own_session(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard
) -> None:
    other = atlas.add(OLD, session_id="demo")
    result = guard.add("Forget the trip budget cap.", session_id="review")
    assert result.decisions == ()
    assert statuses(atlas, other.id) is MemoryStatus.ACTIVE
