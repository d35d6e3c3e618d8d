"""Where files live (``memory_core.paths``): read from the environment at each call."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import paths


def test_model_cache_dir_is_per_machine_not_per_data_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ATLAS_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path / "one"))
    first = paths.model_cache_dir()
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path / "two"))
    assert paths.model_cache_dir() == first == tmp_path / "cache" / "elastic-atlas" / "models"
    assert not first.exists()  # named, not created


def test_model_cache_dir_falls_back_to_the_home_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ATLAS_MODEL_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.model_cache_dir() == tmp_path / ".cache" / "elastic-atlas" / "models"


def test_model_cache_dir_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ATLAS_MODEL_DIR", str(tmp_path / "models"))
    assert paths.model_cache_dir() == tmp_path / "models"
