"""Importers: foreign conversation files to validated ``atlas-session/1`` (``atlas import``).

Each file format is one module with an ``import_file(path, options)``; ``IMPORTERS`` maps
the name the command line uses to it. A source that is not a file (a recorded atlas in a
database) has an ``import_source(source, options)`` in ``SOURCE_IMPORTERS``. ``import_files``
and ``import_source`` convert and validate before ``write_conversations`` writes anything.
"""

from __future__ import annotations

from memory_core.harness.importers import locomo, longmemeval, openai_chat, recording
from memory_core.harness.importers.base import (
    DEFAULT_IMPORT_MAX_BYTES,
    DEFAULT_SESSION_GAP_SECONDS,
    ImportedConversation,
    Importer,
    ImportOptions,
    Source,
    SourceImporter,
)
from memory_core.harness.importers.batch import import_files, import_source, write_conversations

IMPORTERS: dict[str, Importer] = {
    "locomo": locomo.import_file,
    "longmemeval": longmemeval.import_file,
    "openai-chat": openai_chat.import_file,
}

SOURCE_IMPORTERS: dict[str, SourceImporter] = {
    "recording": recording.import_source,
}

__all__ = [
    "DEFAULT_IMPORT_MAX_BYTES",
    "DEFAULT_SESSION_GAP_SECONDS",
    "IMPORTERS",
    "SOURCE_IMPORTERS",
    "ImportOptions",
    "ImportedConversation",
    "Importer",
    "Source",
    "SourceImporter",
    "import_files",
    "import_source",
    "write_conversations",
]
