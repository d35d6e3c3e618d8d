"""One exception tree for the whole library.

    AtlasError
    ├── ConfigError            bad configuration value (names field, value, allowed range)
    ├── InputError             bad argument to a public call (empty content, bad vector, ...)
    │   └── UploadError        a file from outside (upload, import) broke a limit, its schema
    │                          or a domain rule (names the file, the field, the limit)
    ├── NotFoundError          unknown memory, session, item or run id
    ├── EmbeddingError         the embedder failed or returned unusable vectors
    ├── JudgeError             a contradiction judge backend failed or replied unusably
    │   └── JudgeTimeoutError
    ├── IndexError_            the vector index rejected an operation (FAISS errors translated)
    ├── SessionFormatError     an ``atlas-session/1`` file is invalid (carries every problem)
    ├── StoreError             the database failed (SQLAlchemy errors translated)
    │   └── StoreUnavailableError
    └── AccessDeniedError      the caller's role may not perform the action

Every subclass also derives from the closest built-in (``ValueError``, ``KeyError``, ...)
so callers that catch built-ins keep working.
"""

from __future__ import annotations

from collections.abc import Sequence


class AtlasError(Exception):
    """Root of every error raised on purpose by ``memory_core``."""


class ConfigError(AtlasError, ValueError):
    """A configuration field has a value outside what it allows."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"config field '{field}' = {value!r} is invalid: {allowed}")


class InputError(AtlasError, ValueError):
    """An argument to a public call is unusable; nothing was changed."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class UploadError(InputError):
    """A file handed in from outside (an upload, an import) is refused; nothing was kept.

    ``file`` is the name its sender knows (never a server path), ``field`` where in the
    file the problem is (a JSON path, ``line 3``, ``columns``, ``file`` for the whole).
    """

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        super().__init__(field, problem)
        self.args = (f"{file}: {field}: {problem}",)

    def __str__(self) -> str:
        return str(self.args[0])


class NotFoundError(AtlasError, KeyError):
    """An id does not name anything that exists (anymore)."""

    def __init__(self, what: str, ident: object) -> None:
        self.what = what
        self.ident = ident
        super().__init__(f"{what} {ident!r} not found")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class EmbeddingError(AtlasError, RuntimeError):
    """The embedder failed or produced vectors of the wrong shape or with NaN."""


class JudgeError(AtlasError, RuntimeError):
    """A contradiction judge's backend (e.g. an LLM endpoint) failed or replied unusably."""


class JudgeTimeoutError(JudgeError, TimeoutError):
    """The judge's backend did not answer within its timeout."""


class IndexError_(AtlasError, RuntimeError):
    """The vector index rejected an operation."""


class SessionFormatError(AtlasError, ValueError):
    """A session file is invalid; ``problems`` lists every problem with its JSON path."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        shown = "\n  ".join(self.problems[:50])
        more = f"\n  ... and {len(self.problems) - 50} more" if len(self.problems) > 50 else ""
        super().__init__(f"{source}: {len(self.problems)} problem(s)\n  {shown}{more}")


class StoreError(AtlasError, RuntimeError):
    """The persistence layer failed; the in-memory atlas is unaffected."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached, is locked or is full."""


class AccessDeniedError(AtlasError, PermissionError):
    """The current identity's role does not allow the action."""

    def __init__(self, action: str, role: str | None) -> None:
        self.action = action
        self.role = role
        super().__init__(f"action '{action}' is not allowed for role {role!r}")
