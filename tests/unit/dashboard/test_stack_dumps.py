"""SIGUSR1 makes a dashboard process print the stacks of all its threads, and goes on."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from tests.unit.test_layout import ROOT

WAITING_PROGRAM = """
import sys, threading, time
from memory_core.dashboard.stack_dumps import enable_stack_dumps

def parked_worker():
    time.sleep(60)

enable_stack_dumps()
threading.Thread(target=parked_worker, name="parked", daemon=True).start()
print("ready", flush=True)
sys.stdin.readline()  # the test's signal arrives while the main thread waits here
print("still running", flush=True)
"""


def test_the_signal_dumps_every_thread_and_the_process_goes_on() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WAITING_PROGRAM],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGUSR1)
        time.sleep(0.5)  # the C handler writes at once; give the write a moment
        out, err = proc.communicate("go\n", timeout=30)
    finally:
        proc.kill()
    assert out.strip() == "still running"
    assert "parked_worker" in err  # the other thread's stack, not only the main one
    assert "Current thread 0x" in err and "\nThread 0x" in "\n" + err  # main and worker
