"""Cyclic garbage collection paused while a snapshot is read or restored.

Loading 100k memories creates a few hundred thousand container objects (JSON lists,
tuples, postings) and none of them is garbage; each batch of 700 triggers a collection
and every tenth of those rescans the older ones, which cost a fifth of a 100k load's CPU
time (measured). Reference counting still frees everything as usual meanwhile.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (it stays off if it was off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
