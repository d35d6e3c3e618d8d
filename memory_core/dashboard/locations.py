"""Where things are, as ordinary pages say it: relative to the data folder, never a
server path or a password.

A page visitor needs to know which database or folder is meant, not where the server
keeps it; ``sqlite:////srv/atlas/data/atlas.db`` tells them nothing and tells an
attacker the layout. Full locations stay in the server's log (and an admin's details).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from memory_core.boundary import excerpt, mask_secrets
from memory_core.paths import data_dir

DATA_FOLDER = "the data folder"


def shown_path(path: Path, folder: Path | None = None) -> str:
    """``path`` relative to the data folder (``conversations/x.json in the data folder``),
    or its name only when it lies elsewhere."""
    where = (folder or data_dir()).resolve()
    full = path.resolve()
    if full == where:
        return DATA_FOLDER
    if full.is_relative_to(where):
        return f"{full.relative_to(where).as_posix()} in {DATA_FOLDER}"
    return full.name


def shown_url(url: str, folder: Path | None = None) -> str:
    """A database URL as pages, logs and saved runs show it: a SQLite file of the data
    folder by its name (``atlas.db (data folder)``), anything else with its password
    masked."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return excerpt(mask_secrets(url))
    if parsed.drivername.startswith("sqlite") and parsed.database:
        path = Path(parsed.database)
        where = (folder or data_dir()).resolve()
        if path.resolve().parent == where:
            return f"{path.name} (data folder)"
        return f"SQLite file {path.name}"
    return mask_secrets(parsed.render_as_string(hide_password=True))


def shown_text(text: str, folder: Path | None = None) -> str:
    """A message (a database error, a status) with the data folder's path replaced by
    its name and every URL password masked."""
    where = str((folder or data_dir()).resolve())
    return mask_secrets(text.replace(where, DATA_FOLDER))
