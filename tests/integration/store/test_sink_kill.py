"""A process killed with SIGKILL mid-write leaves a consistent database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from support.children import kill_when

from memory_core.store import open_database
from memory_core.store.events import EventRow, WeightSampleRow

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHILD = Path(__file__).with_name("sink_child.py")


def test_hard_kill_loses_at_most_the_unflushed_tail(db_url: str, tmp_path: Path) -> None:
    open_database(db_url).close()  # schema first, so the child's start-up is quick
    flushed = 0

    def progress(line: str) -> bool:
        nonlocal flushed
        flushed = int(line.split()[1])
        return flushed >= 4000

    kill_when(CHILD, [db_url], tmp_path / "child.err", progress, settle=0.25)  # mid-batch
    assert flushed >= 4000

    db = open_database(db_url)
    try:
        with db.session() as s:
            if db.dialect == "sqlite":
                assert s.execute(text("PRAGMA integrity_check")).scalar() == "ok"
            events = s.scalar(select(func.count()).select_from(EventRow)) or 0
            samples = s.scalar(select(func.count()).select_from(WeightSampleRow)) or 0
            counts = [
                int(p["access_count"])
                for p in s.scalars(select(EventRow.payload).order_by(EventRow.id))
            ]
        assert events >= flushed  # everything flushed before the kill is there
        assert samples == events  # each batch's two inserts landed together or not at all
        assert counts == list(range(events))  # a prefix: no holes, no duplicates
    finally:
        db.close()


def test_normal_exit_without_close_loses_nothing(db_url: str) -> None:
    """The sink's atexit hook writes what is buffered when the interpreter ends."""
    open_database(db_url).close()
    script = (
        "import sys\n"
        "from memory_core.engine.events import MemoryReinforced\n"
        "from memory_core.store import EventSink, open_database\n"
        "sink = EventSink(open_database(sys.argv[1]), flush_interval=3600)\n"
        "for i in range(1234):\n"
        "    sink(MemoryReinforced(at=1.7e9 + i, node_id=f'n{i}', weight=1.0,"
        " strength=1.0, access_count=i))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, db_url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    db = open_database(db_url)
    try:
        assert db.events.count() == 1234
    finally:
        db.close()
