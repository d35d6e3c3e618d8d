"""Child process for the hard-kill test: writes events through a sink until killed.

Prints ``flushed N`` after each explicit flush, so the parent knows a lower bound of
what must be in the database after the kill.
"""

from __future__ import annotations

import sys

from memory_core.engine.events import MemoryReinforced
from memory_core.store import EventSink, open_database


def main(url: str) -> None:
    sink = EventSink(open_database(url), atlas_id="killed", flush_interval=0.1, batch_size=200)
    i = 0
    while True:
        for _ in range(100):
            sink(
                MemoryReinforced(
                    at=1_700_000_000.0 + i,
                    session_id="s",
                    node_id=f"n{i}",
                    weight=1.0,
                    strength=1.0,
                    access_count=i,
                )
            )
            i += 1
        if i % 1000 == 0:
            sink.flush()
            print(f"flushed {i}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
