"""A recording process killed with SIGKILL in the middle of a checkpoint loses nothing it
had written: the last good checkpoint loads, and the events after it follow on from it
without a gap, so a follower rebuilds every memory the log holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from support.children import kill_when

from memory_core import HashingEmbedder
from memory_core.store import open_database
from memory_core.store.follow import AtlasFollower
from memory_core.store.recording import open_recorded

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHILD = Path(__file__).with_name("checkpoint_child.py")
KILL_AT_CHECKPOINT = 3  # the first is taken at start, before any write


@pytest.mark.parametrize("where", ["copy", "parts"])
def test_kill_mid_checkpoint_keeps_the_last_checkpoint_and_every_event_after_it(
    tmp_path: Path, where: str
) -> None:
    """Killed after the copy under the lock, or inside the database transaction with
    part of the file's bytes inserted (``snapshot_parts``)."""
    url = f"sqlite:///{tmp_path / 'atlas.db'}"
    open_database(url).close()  # schema first, so the child's start-up is quick
    added: list[str] = []
    atlas_id, announced = "", 0

    def progress(line: str) -> bool:
        nonlocal atlas_id, announced
        word, _, value = line.partition(" ")
        if word == "atlas":
            atlas_id = value
        elif word == "added":
            added.append(value)
        elif word == "checkpoint":
            announced = int(value)
        return announced >= KILL_AT_CHECKPOINT  # killed inside its 0.15 s dawdle

    log = tmp_path / "child.err"
    kill_when(CHILD, [url, where], log, progress)
    assert announced == KILL_AT_CHECKPOINT, log.read_text()

    db = open_database(url)
    try:
        with db.session() as s:
            assert s.execute(text("PRAGMA integrity_check")).scalar() == "ok"
            orphans = "SELECT count(*) FROM snapshot_parts WHERE snapshot_id NOT IN (SELECT id FROM snapshots)"
            assert s.execute(text(orphans)).scalar() == 0  # none of the interrupted one's
        checkpoints = db.snapshots.list(atlas_id=atlas_id).items
        assert len(checkpoints) == KILL_AT_CHECKPOINT - 1  # the interrupted one never landed
        last = checkpoints[0]
        assert last.event_seq is not None
        restored = open_recorded(db.snapshots, last.id, embedder=HashingEmbedder(64))
        assert len(restored) == last.node_count
        assert {n.id for n in restored.nodes()} == set(added[: last.node_count])

        seqs: list[int | None] = []
        while batch := db.events.after(atlas_id, seqs[-1] or 0 if seqs else 0, limit=10_000):
            seqs += [e.seq for e in batch]
        assert seqs == list(range(1, len(seqs) + 1))  # a gap-free log
        assert seqs[-1] > last.event_seq  # events written after the last checkpoint

        follower = AtlasFollower(db, atlas_id, embedder=HashingEmbedder(64))
        follower.catch_up()
        assert follower.atlas is not None and follower.seq == seqs[-1]
        held = {n.id for n in follower.atlas.nodes()}
        # every memory written to the log, and they are the agent's first adds in order
        assert held == set(added[: len(held)])
        assert len(held) > last.node_count
    finally:
        db.close()
