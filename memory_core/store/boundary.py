"""The error boundary: SQLAlchemy and driver exceptions never leave the store package.

``StoreUnavailableError`` means retrying may help (cannot reach, locked, disk full);
``StoreError`` is anything else (constraint violated, bad schema, ...).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from memory_core.errors import StoreError, StoreUnavailableError


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Re-raise database failures as the library's own errors."""
    try:
        yield
    except (OperationalError, PoolTimeoutError) as exc:
        raise StoreUnavailableError(f"{action}: database unavailable: {_reason(exc)}") from exc
    except DBAPIError as exc:
        if exc.connection_invalidated:
            raise StoreUnavailableError(f"{action}: connection lost: {_reason(exc)}") from exc
        raise StoreError(f"{action}: {_reason(exc)}") from exc
    except SQLAlchemyError as exc:
        raise StoreError(f"{action}: {_reason(exc)}") from exc


def _reason(exc: SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
