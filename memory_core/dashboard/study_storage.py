"""Where a sweep's Optuna study may live: configuration, not free text.

A storage URL typed into a page makes the server open (and create) a database wherever
the URL says: ``sqlite:////etc/x.db`` writes into /etc. So the page offers the SQLite
files of the data folder (``sweeps.sqlite`` first, created on first use) and the URLs an
operator listed in ``ATLAS_STUDY_STORAGE_URLS``; anything else is refused unless the
operator set ``ATLAS_ALLOW_ANY_STUDY_STORAGE=1``. URLs are shown with their password
masked and data-folder files by their name only (``locations.shown_url``), in every
message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from memory_core.dashboard.locations import shown_url
from memory_core.errors import InputError
from memory_core.paths import data_dir

STORAGE_URLS_ENV = "ATLAS_STUDY_STORAGE_URLS"
"""Extra study storages an operator offers: URLs separated by commas, spaces or newlines."""
ALLOW_ANY_ENV = "ATLAS_ALLOW_ANY_STUDY_STORAGE"
"""``1`` lets people type any storage URL (a trusted, single-user dashboard)."""
DEFAULT_FILE = "sweeps.sqlite"
SQLITE_SUFFIXES = (".sqlite", ".sqlite3")
_SEPARATORS = re.compile(r"[\s,]+")


@dataclass(frozen=True, slots=True)
class StorageChoice:
    """One storage the page offers: the URL used, and what is shown of it."""

    url: str
    label: str


def configured_urls() -> list[str]:
    """The operator's ``ATLAS_STUDY_STORAGE_URLS``, in order, without repeats."""
    raw = os.environ.get(STORAGE_URLS_ENV, "")
    return list(dict.fromkeys(u for u in _SEPARATORS.split(raw) if u))


def any_storage_allowed() -> bool:
    return os.environ.get(ALLOW_ANY_ENV, "").strip().lower() in ("1", "true", "yes")


def default_storage() -> str:
    """The data folder's ``sweeps.sqlite``, next to the dashboard's database."""
    return f"sqlite:///{data_dir() / DEFAULT_FILE}"


def storage_choices(folder: Path | None = None) -> list[StorageChoice]:
    """``sweeps.sqlite`` first, the data folder's other SQLite study files, then the
    operator's URLs."""
    where = folder or data_dir()
    others = sorted(
        p
        for p in where.iterdir()
        if p.is_file() and p.suffix in SQLITE_SUFFIXES and p.name != DEFAULT_FILE
    )
    urls = [f"sqlite:///{p}" for p in (where / DEFAULT_FILE, *others)] + configured_urls()
    return [StorageChoice(u, shown_url(u, where)) for u in dict.fromkeys(urls)]


def check_storage(url: str, folder: Path | None = None) -> str:
    """``url`` if the page may open it: offered, or any URL when the operator allows that.

    Raises:
        InputError: an empty or unparsable URL, or one nobody configured; the message
            shows it masked and names the two settings.
    """
    text = url.strip()
    if not text:
        raise InputError("storage", "choose a study storage")
    try:
        make_url(text)
    except (ArgumentError, ValueError):
        raise InputError("storage", f"{shown_url(text, folder)} is not a database URL") from None
    if text in {c.url for c in storage_choices(folder)} or any_storage_allowed():
        return text
    raise InputError(
        "storage",
        f"{shown_url(text, folder)} is not one of the study storages offered here (the data "
        f"folder's SQLite files and {STORAGE_URLS_ENV}); an operator can add it to "
        f"{STORAGE_URLS_ENV} or allow any URL with {ALLOW_ANY_ENV}=1",
    )
