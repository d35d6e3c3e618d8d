"""Where files live. Read from the environment when called, never at import time."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$ATLAS_DATA_DIR`` or ``./data``; created on first use."""
    path = Path(os.environ.get("ATLAS_DATA_DIR", "data")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def conversations_dir() -> Path:
    """Where the user's own conversations live (``atlas import ... --out`` this folder):
    the tuning page lists them beside the samples. Not created here: absent means none."""
    return data_dir() / "conversations"
