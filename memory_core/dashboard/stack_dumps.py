"""``kill -USR1 <server pid>`` prints every thread's stack to the server's stderr.

A dashboard that stops answering (a page stuck on its last render, a job that never
starts) is a lock held too long or a thread waiting on another; the stacks of all
threads at that moment say which. Python's ``faulthandler`` writes them from a C signal
handler, so it works even while a thread holds the GIL or the server is wedged, and it
costs nothing until the signal arrives. The browser tests send the signal when a test
fails and attach the dump to the report.
"""

from __future__ import annotations

import faulthandler
import signal
import sys

DUMP_SIGNAL = signal.SIGUSR1


def enable_stack_dumps() -> None:
    """Install the handler (idempotent; a no-op where the platform has no ``SIGUSR1``)."""
    if hasattr(faulthandler, "register") and hasattr(signal, "SIGUSR1"):
        faulthandler.register(DUMP_SIGNAL, file=sys.stderr, all_threads=True)
