"""Child process for the checkpoint kill test: a recorded atlas writes until killed.

Every checkpoint announces itself (``checkpoint N``) and then dawdles, so the parent can
kill the process in the middle of one: with ``copy`` between its copy under the lock and
the rest of its work; with ``parts`` inside its database transaction, after the second
of its file's parts (1 KB each here) is inserted. After each add the child prints
``added <id>``.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import numpy as np
from sqlalchemy.orm import Session
from support.words import word_sentence

import memory_core.store.sql as sql
from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.engine import snapshot
from memory_core.store.live import LiveRecorder

_out = threading.Lock()


def _say(line: str) -> None:
    """One whole line at a time: the checkpoint thread and the agent both report."""
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _dawdle_after_the_copy() -> None:
    complete = snapshot.complete
    taken = 0

    def dawdling(frozen: Any, lock: Any) -> Any:
        nonlocal taken
        taken += 1
        _say(f"checkpoint {taken}")
        time.sleep(0.15)
        return complete(frozen, lock)

    snapshot.complete = dawdling  # type: ignore[assignment]


def _dawdle_between_the_parts() -> None:
    sql.PART_BYTES = 1024  # many parts per checkpoint, the first one's too
    execute = Session.execute
    taken = 0

    def dawdling(self: Session, statement: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal taken
        result = execute(self, statement, *args, **kwargs)
        table = getattr(statement, "table", None)
        part = getattr(table, "name", None) == "snapshot_parts" and statement.compile().params
        if part and part["part"] == 1:
            taken += 1
            _say(f"checkpoint {taken}")
            time.sleep(0.15)
        return result

    Session.execute = dawdling  # type: ignore[method-assign]


def main(url: str, where: str) -> None:
    {"copy": _dawdle_after_the_copy, "parts": _dawdle_between_the_parts}[where]()
    clock = ManualClock(1_700_000_000.0)
    atlas = ElasticMemoryAtlas(
        AtlasConfig(episode_after_memories=None),
        embedder=HashingEmbedder(64),
        clock=clock,
        importance="constant",
    )
    recorder = LiveRecorder.start(
        atlas, url=url, name="killed", snapshot_every=0.2, snapshot_events=100
    )
    _say(f"atlas {recorder.atlas_id}")
    rng = np.random.default_rng(3)
    i = 0
    while True:
        node = atlas.add(word_sentence(rng, i, 7), session_id="s")
        _say(f"added {node.id}")
        clock.advance(1.0)
        i += 1
        time.sleep(0.002)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
