"""Which conversations the tuning page offers: the samples and the user's own."""

from __future__ import annotations

from pathlib import Path

from memory_core.dashboard.demo import sample_files
from memory_core.paths import conversations_dir

OWN_PREFIX = "yours/"
"""Names of the user's conversations start with this, so a sample never hides one."""


def conversation_files(samples: Path | None = None, own: Path | None = None) -> dict[str, Path]:
    """Samples by file stem, then every ``*.json`` in the data folder's ``conversations``
    (imported or recorded ones) as ``yours/<stem>``; each group sorted."""
    found = dict(sample_files(samples))
    folder = own if own is not None else conversations_dir()
    if folder.is_dir():
        found.update((OWN_PREFIX + p.stem, p) for p in sorted(folder.glob("*.json")) if p.is_file())
    return found
