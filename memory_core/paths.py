"""Where files live. Read from the environment when called, never at import time."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$ATLAS_DATA_DIR`` or ``./data``; created on first use."""
    path = Path(os.environ.get("ATLAS_DATA_DIR", "data")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_cache_dir() -> Path:
    """Where models the project derives itself are kept (the ONNX graph of MiniLM):
    ``$ATLAS_MODEL_DIR``, else ``$XDG_CACHE_HOME/elastic-atlas/models``, else
    ``~/.cache/elastic-atlas/models``. Not under the data folder: a file that takes seconds
    to build and is the same for every atlas is built once per machine, not once per data
    folder (each dashboard, test or demo with its own folder rebuilt it). Not created here."""
    override = os.environ.get("ATLAS_MODEL_DIR")
    if override:
        return Path(override).resolve()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).resolve() / "elastic-atlas" / "models"


def conversations_dir() -> Path:
    """Where the user's own conversations live (``atlas import ... --out`` this folder):
    the tuning page lists them beside the samples. Not created here: absent means none."""
    return data_dir() / "conversations"
