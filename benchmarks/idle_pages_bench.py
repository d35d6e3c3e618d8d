"""What a dashboard page costs at rest: reruns and server CPU per page (issue #29 point 6).

Starts the dashboard (``streamlit run app.py``, hashing embedder, a throw-away data
folder), opens each page in headless Chromium, waits until its first run finished, then
watches it for ``--seconds`` with nothing running anywhere:

- **reruns** are counted from the browser's side: every rerun — a full page run or a
  fragment's — starts with a ``rerun_script`` message the browser sends over the
  websocket, so the frames sent are decoded (``BackMsg``) and counted, split into
  full-page reruns and fragment reruns;
- **server CPU** is the Streamlit process's user+system CPU time over the window
  (``psutil``), as a share of one core.

The browser tests assert the counts (``tests/e2e/test_shared_and_jobs.py``); this script
prints the table docs/dashboard.md quotes. Run:
``python -m benchmarks.idle_pages_bench [--seconds 20] [--pages home,ab_tuning]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
from playwright.sync_api import Page, WebSocket, sync_playwright
from streamlit.proto.BackMsg_pb2 import BackMsg

PAGES = (
    "home",
    "demo_player",
    "live_graph",
    "playground",
    "weights",
    "eviction_log",
    "key_facts",
    "ab_tuning",
    "conflict_review",
    "knowledge_audit",
)
APP_READY = (
    "[data-testid=stApp][data-test-script-state=notRunning][data-test-connection-state=CONNECTED]"
)
"""The app takes input: no script run going and the websocket connected (Streamlit greys
out and ignores every widget while it is not)."""
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@dataclass(frozen=True, slots=True)
class IdleCost:
    """One page watched at rest."""

    page: str
    seconds: float
    full_reruns: int
    fragment_reruns: int
    cpu_seconds: float

    @property
    def cpu_share(self) -> float:
        """Server CPU as a share of one core over the window."""
        return self.cpu_seconds / self.seconds


class RerunCounter:
    """Counts the rerun requests a browser page sends over Streamlit's websocket."""

    def __init__(self, page: Page) -> None:
        self.full = 0
        self.fragment = 0
        page.on("websocket", self._attach)

    def _attach(self, socket: WebSocket) -> None:
        socket.on("framesent", self._sent)

    def _sent(self, payload: str | bytes) -> None:
        if isinstance(payload, str):
            return
        message = BackMsg()
        try:
            message.ParseFromString(payload)
        except Exception:  # not a BackMsg: nothing to count
            return
        if message.WhichOneof("type") != "rerun_script":
            return
        if message.rerun_script.fragment_id:
            self.fragment += 1
        else:
            self.full += 1

    def reset(self) -> tuple[int, int]:
        counts = (self.full, self.fragment)
        self.full = self.fragment = 0
        return counts


def server_process(port: int) -> psutil.Process:
    """The ``streamlit run`` process serving ``port``."""
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if "streamlit" in " ".join(cmdline) and str(port) in cmdline:
            return proc
    raise LookupError(f"no streamlit process serves port {port}")


def cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


def open_at_rest(page: Page, base: str, slug: str, timeout: float = 120_000) -> None:
    page.goto(f"{base}/{'' if slug == 'home' else slug}")
    page.wait_for_selector("h1", timeout=timeout)
    page.wait_for_selector(APP_READY, timeout=timeout)


def idle_cost(
    page: Page, counter: RerunCounter, proc: psutil.Process, base: str, slug: str, seconds: float
) -> IdleCost:
    """Open ``slug``, let its first run finish, then count what it does for ``seconds``."""
    open_at_rest(page, base, slug)
    page.wait_for_timeout(500)  # the first run's own follow-up messages settle
    counter.reset()
    cpu_before, started = cpu_seconds(proc), time.monotonic()
    page.wait_for_timeout(seconds * 1000)  # the measurement window itself, not a wait for state
    elapsed = time.monotonic() - started
    cpu = cpu_seconds(proc) - cpu_before
    full, fragment = counter.reset()
    return IdleCost(slug, elapsed, full, fragment, cpu)


@contextmanager
def dashboard(data: Path) -> Iterator[tuple[str, psutil.Process]]:
    """The e2e tests' server on ``data``, and its process."""
    from tests.e2e.conftest import streamlit_server

    with streamlit_server(data, ATLAS_DASHBOARD_EMBEDDER="hashing") as url:
        yield url, server_process(int(url.rsplit(":", 1)[1]))


def measure(pages: tuple[str, ...], seconds: float) -> list[IdleCost]:
    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("chromium is not installed; run `make chromium`")
    with (
        tempfile.TemporaryDirectory() as tmp,
        dashboard(Path(tmp)) as (url, proc),
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        counter = RerunCounter(page)
        open_at_rest(page, url, "home")  # builds the live system once
        results = [idle_cost(page, counter, proc, url, slug, seconds) for slug in pages]
        browser.close()
    return results


def table(results: list[IdleCost]) -> str:
    lines = [
        "| Page | Full reruns | Fragment reruns | Server CPU (% of a core) |",
        "|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.page} | {r.full_reruns} | {r.fragment_reruns} | {100 * r.cpu_share:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="window per page")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated page slugs")
    args = parser.parse_args()
    pages = tuple(p for p in args.pages.split(",") if p)
    unknown = sorted(set(pages) - set(PAGES))
    if unknown:
        raise SystemExit(f"--pages: unknown {unknown}; known: {', '.join(PAGES)}")
    results = measure(pages, args.seconds)
    print(f"load average {os.getloadavg()[0]:.2f}, {args.seconds:g} s at rest per page")
    print(table(results))


if __name__ == "__main__":
    main()
