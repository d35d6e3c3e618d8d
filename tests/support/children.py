"""Child processes killed with SIGKILL: the scaffold of the hard-kill tests.

The child writes until killed and reports progress one line at a time on stdout; the
test reads lines until it has seen what it waits for, then kills the child (a child that
dies first fails the test with its stderr).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def kill_when(
    script: Path,
    args: list[str],
    log: Path,
    seen: Callable[[str], bool],
    *,
    settle: float = 0.0,
    timeout: float = 120.0,
) -> None:
    """Run ``script args`` and SIGKILL it once ``seen`` returns True for a stdout line
    (or after ``timeout`` seconds), ``settle`` seconds later.

    The child finds ``support`` on its path and writes unbuffered; its stderr goes to
    ``log``.
    """
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
    with (
        log.open("w") as err,
        subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path},
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    pytest.fail(f"child died early: {log.read_text()}")
                if seen(line.strip()):
                    break
            time.sleep(settle)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
