"""Loading the word-frequency table off the agent's path.

The default importance estimator reads ``wordfreq``'s English table, which loads on first
use (~1-2 s: a compressed file and its tokenizer). Left alone, the agent's first ``add``
would pay it. An atlas built with that estimator starts loading it at construction on a
daemon thread, once per process; the first write that needs it before it is ready waits
for that thread instead of loading it a second time on its own. The thread also imports
what numpy loads lazily on a first call the engine makes (``numpy.ma``).
"""

from __future__ import annotations

import importlib
import logging
import threading

from wordfreq import zipf_frequency

from memory_core.engine.importance import LANGUAGE

log = logging.getLogger(__name__)

_lock = threading.Lock()
_loader: threading.Thread | None = None


def _load() -> None:
    zipf_frequency("the", LANGUAGE)  # loads the table and the language's tokenizer
    # numpy imports numpy.ma on the first np.unique (~60 ms), which the first add and
    # the first retrieve would otherwise pay
    importlib.import_module("numpy.ma")
    log.debug("word-frequency table for %r loaded", LANGUAGE)


def preload_word_frequencies() -> threading.Thread:
    """Start loading the table on a daemon thread (once per process); returns that thread."""
    global _loader
    with _lock:
        if _loader is None:
            _loader = threading.Thread(target=_load, name="atlas-wordfreq-preload", daemon=True)
            _loader.start()
        return _loader


def wait_word_frequencies() -> None:
    """Block until a started preload is done (no-op when none was started or it ended)."""
    loader = _loader
    if loader is not None and loader.is_alive() and loader is not threading.current_thread():
        loader.join()
