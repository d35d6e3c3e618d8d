"""The ``atlas-session/1`` conversation format: typed records, loading and validation.

A file is checked twice: against the shipped JSON Schema (shapes, types, allowed values)
and by semantic checks the schema cannot express (unique ids, evidence that names real
turns, timezone-aware timestamps in order, non-empty texts). Both passes run on every
file and all problems are collected before anything is raised, so one ``atlas validate``
shows them all; nothing invalid is ever loaded. The format is described in
``docs/session-format.md``.

Three modules, one job each: ``records`` (the typed records and writing them back),
``checks`` (validation and building) and ``files`` (reading from disk); this face
re-exports what the rest of the package uses.
"""

from memory_core.harness.session_format.checks import (
    DEFAULT_TURN_GAP_SECONDS,
    SPEAKER_MAX_CHARS,
    is_id,
    is_speaker,
    parse_conversation,
    render_path,
)
from memory_core.harness.session_format.files import (
    DEFAULT_MAX_BYTES,
    decode_json,
    load_conversation,
    load_conversations,
    read_text,
    session_files,
    validate_file,
)
from memory_core.harness.session_format.records import (
    FORMAT,
    Conversation,
    Expect,
    JsonPath,
    KeyFact,
    RecordedRead,
    SessionRecord,
    Turn,
    conversation_to_dict,
    read_to_dict,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_TURN_GAP_SECONDS",
    "FORMAT",
    "SPEAKER_MAX_CHARS",
    "Conversation",
    "Expect",
    "JsonPath",
    "KeyFact",
    "RecordedRead",
    "SessionRecord",
    "Turn",
    "conversation_to_dict",
    "decode_json",
    "is_id",
    "is_speaker",
    "load_conversation",
    "load_conversations",
    "parse_conversation",
    "read_text",
    "read_to_dict",
    "render_path",
    "session_files",
    "validate_file",
]
