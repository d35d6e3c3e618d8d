"""A real dashboard server and a real headless Chromium for the browser tests.

The server runs ``streamlit run app.py`` on a free loopback port with the real MiniLM
embedder (offline; ``ATLAS_E2E_EMBEDDER=hashing`` swaps in the fast fake) and a
throw-away data directory. Chromium is Debian's (``make
chromium``); Playwright is never allowed to download a browser.

When a browser test fails, every server still running is asked for the stacks of all
its threads (``SIGUSR1``, see ``memory_core.dashboard.stack_dumps``) and the tail of its
log, dump included, is attached to the failure's report, and so is what each open tab
of the test's browser says (its address, whether its script runs, its console and page
errors): a page stuck on its last render shows there which side waits for what.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    WebSocket,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 90.0
LOG_TAIL_LINES = 1_500
"""Enough for a stack dump of every server thread and the log lines before it."""

_running: list[tuple[subprocess.Popen[bytes], Path]] = []
"""The servers started by ``streamlit_server`` and not yet stopped, with their logs."""

SOCKET_FRAMES_KEPT = 60
_frames: weakref.WeakKeyDictionary[Page, deque[tuple[float, str, int]]] = (
    weakref.WeakKeyDictionary()
)
"""Each ``tabs`` tab's latest websocket frames (when, sent / received / closed, bytes): a
failure's report shows whether the page's last click ever reached the server."""


APP_STATES_SCRIPT = """
window.__appStates = [];
new MutationObserver(() => {
  const app = document.querySelector('[data-testid=stApp]');
  if (!app) return;
  const state = app.getAttribute('data-test-script-state') + ' / '
    + app.getAttribute('data-test-connection-state');
  const log = window.__appStates;
  if (!log.length || log[log.length - 1][1] !== state) log.push([performance.now(), state]);
}).observe(document, {subtree: true, attributes: true, childList: true});
window.__pointer = [];
for (const type of ['mousedown', 'mouseup', 'click']) {
  addEventListener(type, e => {
    const t = e.target, log = window.__pointer;
    const what = (t.getAttribute?.('data-testid') || t.tagName) + ' "'
      + (t.textContent || '').trim().slice(0, 40) + '"';
    log.push([performance.now(), `${type} at ${e.clientX},${e.clientY} on ${what}`]);
    if (log.length > 30) log.shift();
  }, true);
}
"""
"""Records the app's script and connection states as they change (a widget ignores clicks
while the connection is not ``CONNECTED``), and the element under each mouse press,
release and click: for a failure's report (a click whose press and release landed on
different elements is no click on either)."""


def _record_frames(tab: Page) -> None:
    frames = _frames.setdefault(tab, deque(maxlen=SOCKET_FRAMES_KEPT))

    def watch(socket: WebSocket) -> None:
        socket.on("framesent", lambda data: frames.append((time.monotonic(), "sent", len(data))))
        socket.on(
            "framereceived", lambda data: frames.append((time.monotonic(), "received", len(data)))
        )
        socket.on("close", lambda _: frames.append((time.monotonic(), "closed", 0)))

    tab.on("websocket", watch)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when != "call" or not report.failed:
        return
    for proc, _log in _running:
        proc.send_signal(signal.SIGUSR1)
    time.sleep(1.0)  # the handler writes from the server's own process
    for proc, log in _running:
        tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
        report.sections.append(
            (f"server {proc.pid} log tail, thread stacks at failure", "\n".join(tail))
        )
    browser = item.funcargs.get("browser") if isinstance(item, pytest.Function) else None
    if isinstance(browser, Browser):
        report.sections.append(("browser tabs at failure", _tabs_report(browser)))


def _tabs_report(browser: Browser) -> str:
    """Each open tab: address, the app's script state, console messages, its latest
    websocket frames (seconds before the report) and page errors."""
    lines = []
    for context in browser.contexts:
        for tab in context.pages:
            try:
                state = tab.evaluate(
                    "document.querySelector('[data-testid=stApp]')"
                    "?.getAttribute('data-test-script-state') ?? 'no app'"
                )
                lines.append(f"tab {tab.url} · script state {state}")
                lines += [f"  console {m.type}: {m.text}" for m in tab.console_messages()]
                states = tab.evaluate(
                    "[performance.now(), window.__appStates || [], window.__pointer || []]"
                )
                lines += [
                    f"  app {(when - states[0]) / 1000:+.2f} s {state}" for when, state in states[1]
                ]
                lines += [
                    f"  pointer {(when - states[0]) / 1000:+.2f} s {what}"
                    for when, what in states[2]
                ]
                now = time.monotonic()
                lines += [
                    f"  websocket {when - now:+.2f} s {kind} {size} B"
                    for when, kind, size in _frames.get(tab, ())
                ]
                lines += [f"  page error: {e}" for e in tab.page_errors()]
            except PlaywrightError as exc:  # a tab closing meanwhile is no reason to hide the rest
                lines.append(f"tab {tab.url}: not readable ({exc})")
    return "\n".join(lines) or "no open tabs"


def open_expander(page: Page, label: str) -> Locator:
    """Open the expander whose label contains ``label``; return it once it stopped growing.

    Streamlit animates an expander open (about half a second: its ``<details>`` grows,
    clipped, from the header's height). A click on something inside it meanwhile can be
    lost: Playwright scrolls the clipped ``<details>`` to bring the target into view, the
    growing box then slides the target down every frame, and when a frame falls between
    the mouse press (the only event Playwright checks the target of) and the release,
    the release lands beside the target: the click goes to a container of both, the
    target's handler never runs and nothing reaches the server. A person's pointer
    scrolls nothing (the target holds still while the box grows), only a test clicks so.
    The scan-button flake of ``test_reload_reattaches_to_each_long_job`` was this.
    """
    expander = page.get_by_test_id("stExpander").filter(has=page.locator("summary", has_text=label))
    details = expander.locator("details")
    if details.get_attribute("open") is None:
        expander.locator("summary").click()
    expect(details).to_have_attribute("open", "")
    page.wait_for_function(
        "d => d.open && !d.getAnimations().length && !d.style.overflow",
        arg=details.element_handle(),
        polling="raf",
    )
    return expander


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def streamlit_server(data: Path, **env_overrides: str) -> Iterator[str]:
    """``streamlit run app.py`` on a free port with its data in ``data``; yields the URL.

    ``env_overrides`` (e.g. ``ATLAS_DATABASE_URL``) are set after the defaults; without
    one the dashboard's database is ``data/atlas.db``.
    """
    port = _free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        # One intra-op thread: on a busy machine torch's spinning OpenMP threads turn a
        # 20 ms sentence embedding into seconds.
        "OMP_NUM_THREADS": "1",
        "ATLAS_DATA_DIR": str(data),
        # MiniLM by default; ATLAS_E2E_EMBEDDER=hashing for a quick run on a busy machine.
        "ATLAS_DASHBOARD_EMBEDDER": os.environ.get("ATLAS_E2E_EMBEDDER", "minilm"),
    }
    env.pop("ATLAS_DATABASE_URL", None)
    env.update(env_overrides)
    log = (data / "streamlit.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", "app.py",
            "--server.headless", "true",
            "--server.port", str(port),
            "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false",
        ],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    _running.append((proc, data / "streamlit.log"))
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited early:\n{(data / 'streamlit.log').read_text()}")
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=2).text.strip() == "ok":
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("streamlit did not report healthy in time")
            time.sleep(0.3)
        yield url
    finally:
        _running.remove((proc, data / "streamlit.log"))
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with streamlit_server(tmp_path_factory.mktemp("atlas-data")) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed; run `make chromium`")
    with sync_playwright() as pw:
        instance = pw.chromium.launch(
            executable_path=executable,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield instance
        instance.close()


@pytest.fixture
def tabs(browser: Browser) -> Iterator[Callable[[], Page]]:
    """Opens a tab in a browser context of its own (a browser session of its own to the
    server); every one is closed after the test's report, so a failure's report can
    still read them."""
    contexts: list[BrowserContext] = []

    def open_tab() -> Page:
        contexts.append(browser.new_context(viewport={"width": 1440, "height": 1000}))
        contexts[-1].add_init_script(APP_STATES_SCRIPT)
        tab = contexts[-1].new_page()
        _record_frames(tab)
        return tab

    yield open_tab
    for context in contexts:
        context.close()


@pytest.fixture
def page(tabs: Callable[[], Page]) -> Page:
    return tabs()
