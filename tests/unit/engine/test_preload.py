"""The word-frequency table loads off the agent's path: never on the thread of an add."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import wordfreq

from memory_core import ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.engine import importance, preload


def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Forget the loaded table (as in a new process); returns the threads that load it."""
    loads: list[str] = []
    real = wordfreq.get_frequency_list

    def recording(*args: Any, **kwargs: Any) -> Any:
        loads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    for cached in (wordfreq.get_frequency_dict, wordfreq.get_frequency_list, importance.surprisal):
        cached.cache_clear()
    wordfreq._wf_cache.clear()
    monkeypatch.setattr(wordfreq, "get_frequency_list", recording)
    monkeypatch.setattr(preload, "_loader", None)
    return loads


def test_the_first_add_never_loads_the_table_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = _fresh_process(monkeypatch)
    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder(32), clock=ManualClock(0.0))
    node = atlas.add("I went to the LGBTQ support group in Boston yesterday")
    assert loads == ["atlas-wordfreq-preload"]  # loaded once, by the preload thread
    assert node.importance == pytest.approx(importance.information_density(node.content, {}))
    ElasticMemoryAtlas(embedder=HashingEmbedder(32), clock=ManualClock(0.0)).add("again")
    assert loads == ["atlas-wordfreq-preload"]  # once per process


def test_no_preload_for_another_estimator(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = _fresh_process(monkeypatch)
    ElasticMemoryAtlas(embedder=HashingEmbedder(32), importance="constant").add("a fact")
    assert loads == []
    assert preload._loader is None
