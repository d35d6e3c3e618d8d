"""Importers: foreign conversation files to validated ``atlas-session/1`` (``atlas import``).

Each format is one module with an ``import_file(path, options)``; ``IMPORTERS`` maps the
name the command line uses to it. ``import_files`` converts and validates a whole batch
before ``write_conversations`` writes anything.
"""

from __future__ import annotations

from memory_core.harness.importers import locomo, longmemeval, openai_chat
from memory_core.harness.importers.base import (
    DEFAULT_IMPORT_MAX_BYTES,
    DEFAULT_SESSION_GAP_SECONDS,
    ImportedConversation,
    Importer,
    ImportOptions,
)
from memory_core.harness.importers.batch import import_files, write_conversations

IMPORTERS: dict[str, Importer] = {
    "locomo": locomo.import_file,
    "longmemeval": longmemeval.import_file,
    "openai-chat": openai_chat.import_file,
}

__all__ = [
    "DEFAULT_IMPORT_MAX_BYTES",
    "DEFAULT_SESSION_GAP_SECONDS",
    "IMPORTERS",
    "ImportOptions",
    "ImportedConversation",
    "Importer",
    "import_files",
    "write_conversations",
]
