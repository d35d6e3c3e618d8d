"""The public surface is exactly ``memory_core.__all__``, sorted and importable."""

from __future__ import annotations

import importlib
import types

import memory_core


def test_all_names_are_importable_and_unique() -> None:
    assert len(memory_core.__all__) == len(set(memory_core.__all__))
    for name in memory_core.__all__:
        assert getattr(memory_core, name) is not None
        exec(f"from memory_core import {name}", {})


def test_all_is_exactly_the_public_namespace() -> None:
    public = {
        name
        for name, value in vars(memory_core).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(memory_core.__all__)


def test_all_is_sorted_isort_style() -> None:
    def key(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1 if name[0].isupper() else 2, name)

    assert memory_core.__all__ == sorted(memory_core.__all__, key=key)


def test_reexports_are_the_defining_objects() -> None:
    from memory_core.engine.atlas import ElasticMemoryAtlas
    from memory_core.engine.config import AtlasConfig
    from memory_core.errors import AtlasError, InputError

    assert memory_core.ElasticMemoryAtlas is ElasticMemoryAtlas
    assert memory_core.AtlasConfig is AtlasConfig
    assert issubclass(InputError, AtlasError)
    assert issubclass(InputError, ValueError)
    assert issubclass(memory_core.NotFoundError, KeyError)


def test_testing_helpers_are_shipped() -> None:
    testing = importlib.import_module("memory_core.testing")
    assert set(testing.__all__) == {
        "EventRecorder",
        "HashingEmbedder",
        "ManualClock",
        "TickingClock",
        "atlas_differences",
        "mixed_agent",
        "mixed_workload",
        "wait_for",
    }
    recorder = testing.EventRecorder()
    event = memory_core.SessionEnded(at=1.0, session_id="s", mode="keep", affected=0)
    recorder(event)
    assert recorder.of_type("session_end") == [event]
    assert recorder.of_type("added") == []
