"""Who may do what in the dashboard: roles, identities, a users file, a read-only mode.

Roles are optional. Without a users file every visitor is a ``reviewer`` under the name
they type (review actions still need a name, so the audit trail says who did it). With
a users file (``[users.NAME]`` tables holding a ``role`` and a bcrypt ``password_hash``,
written by ``atlas users add``), visitors are ``viewer`` until they log in. Read-only mode
(``ATLAS_READ_ONLY=1``) refuses every mutating action whoever asks. The environment and
the file are read at call time, so a test or an operator can change them without a restart.

    [users.alice]
    role = "reviewer"
    password_hash = "$2b$12$..."
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import bcrypt

from memory_core.errors import AccessDeniedError, ConfigError, InputError

USERS_FILE_ENV = "ATLAS_USERS_FILE"
"""Path of the users TOML file; default ``.streamlit/secrets.toml``."""
READ_ONLY_ENV = "ATLAS_READ_ONLY"
"""``1`` (or ``true``/``yes``/``on``) disables every mutating action."""
ALLOW_OPEN_ENV = "ATLAS_ALLOW_OPEN"
"""``1`` lets the dashboard listen beyond loopback without a users file (trusted networks only)."""
DEFAULT_USERS_FILE = Path(".streamlit") / "secrets.toml"
ANONYMOUS = "anonymous"
MAX_NAME_CHARS = 64
BCRYPT_ROUNDS = 12


class Role(StrEnum):
    """What a person may do, each role including the one before."""

    VIEWER = "viewer"
    REVIEWER = "reviewer"
    ADMIN = "admin"


class Action(StrEnum):
    """Every guarded action; all but ``VIEW`` change something."""

    VIEW = "view"
    WRITE = "write"  # the live atlas: playground writes, demo play, skip ahead, restore, save
    REVIEW = "review"  # approve/reject/edit/expire conflicts and knowledge items
    IMPORT = "import"  # knowledge imports
    ADMIN = "admin"  # users, erasure


ROLE_ACTIONS: dict[Role, frozenset[Action]] = {
    Role.VIEWER: frozenset({Action.VIEW}),
    Role.REVIEWER: frozenset({Action.VIEW, Action.WRITE, Action.REVIEW, Action.IMPORT}),
    Role.ADMIN: frozenset(Action),
}
NAMED_ACTIONS = frozenset({Action.REVIEW, Action.IMPORT, Action.ADMIN})
"""Actions recorded with the actor's name: an anonymous visitor may not perform them."""


@dataclass(frozen=True, slots=True)
class Identity:
    """A person as the dashboard knows them; ``authenticated`` when a password proved it."""

    name: str
    role: Role
    authenticated: bool = False

    @property
    def anonymous(self) -> bool:
        return self.name == ANONYMOUS


@dataclass(frozen=True, slots=True)
class UserEntry:
    role: Role
    password_hash: bytes


def read_only() -> bool:
    """Whether ``ATLAS_READ_ONLY`` asks for a read-only dashboard (read now)."""
    return _flag(READ_ONLY_ENV)


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def users_file() -> Path:
    """The users file named by ``ATLAS_USERS_FILE`` or the Streamlit secrets file."""
    return Path(os.environ.get(USERS_FILE_ENV) or DEFAULT_USERS_FILE)


def check_name(name: object) -> str:
    """A user name: 1-64 printable characters, no surrounding blanks, not ``anonymous``."""
    if not isinstance(name, str) or not name.strip():
        raise InputError("name", "must be a non-empty string")
    text = name.strip()
    if len(text) > MAX_NAME_CHARS or not text.isprintable():
        raise InputError("name", f"must be at most {MAX_NAME_CHARS} printable characters")
    if text == ANONYMOUS:
        raise InputError("name", f"{ANONYMOUS!r} is reserved for visitors without a name")
    return text


def parse_role(value: object) -> Role:
    try:
        return Role(str(value))
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise ConfigError("role", value, f"must be one of {allowed}") from None


def load_users(path: Path | None = None) -> dict[str, UserEntry]:
    """The users of ``path`` (default: ``users_file()``); empty when the file has none."""
    path = path or users_file()
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(USERS_FILE_ENV, str(path), f"must be valid TOML ({exc})") from None
    table = data.get("users", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: users", table, "must be a table of [users.NAME] tables")
    users: dict[str, UserEntry] = {}
    for name, entry in table.items():
        where = f"{path}: users.{name}"
        if not isinstance(entry, dict) or not isinstance(entry.get("password_hash"), str):
            raise ConfigError(where, entry, "needs role and password_hash (a bcrypt hash)")
        digest = entry["password_hash"].encode("ascii", "replace")
        if not digest.startswith((b"$2a$", b"$2b$", b"$2y$")):
            raise ConfigError(f"{where}.password_hash", "<hidden>", "must be a bcrypt hash")
        users[name] = UserEntry(parse_role(entry.get("role", Role.VIEWER)), digest)
    return users


def roles_enabled(path: Path | None = None) -> bool:
    """Whether a users file with at least one user is in force."""
    return bool(load_users(path))


def visitor(name: str | None = None, *, path: Path | None = None) -> Identity:
    """Who someone is before logging in: a viewer when roles are on, else a reviewer
    under the name they typed (``anonymous`` when none)."""
    if roles_enabled(path):
        return Identity(ANONYMOUS, Role.VIEWER)
    typed = (name or "").strip()
    return Identity(check_name(typed) if typed else ANONYMOUS, Role.REVIEWER)


def authenticate(name: str, password: str, *, path: Path | None = None) -> Identity:
    """The identity of a user of the users file whose password matches.

    Raises:
        AccessDeniedError: unknown user or wrong password (the same error for both).
    """
    entry = load_users(path).get(name) if isinstance(name, str) else None
    secret = password.encode("utf-8") if isinstance(password, str) else b""
    if entry is None or not secret or not bcrypt.checkpw(secret, entry.password_hash):
        raise AccessDeniedError("login", None)
    return Identity(name, entry.role, authenticated=True)


def denial(identity: Identity | None, action: Action) -> str | None:
    """Why ``identity`` may not perform ``action`` (for disabled buttons), or ``None``."""
    if action is not Action.VIEW and read_only():
        return "The dashboard is in read-only mode (ATLAS_READ_ONLY): nothing can be changed."
    who = identity or Identity(ANONYMOUS, Role.VIEWER)
    if action not in ROLE_ACTIONS[who.role]:
        return f"Your role ({who.role.value}) may not {action.value}; log in with a role that may."
    if action in NAMED_ACTIONS and who.anonymous:
        return "Enter your name as reviewer first: every review action records who did it."
    return None


def require(identity: Identity | None, action: Action) -> Identity:
    """Return ``identity`` when it may perform ``action``.

    Raises:
        AccessDeniedError: read-only mode, a role without the action, or no name for an
            action the audit trail must attribute.
    """
    who = identity or Identity(ANONYMOUS, Role.VIEWER)
    if denial(who, action) is not None:
        raise AccessDeniedError(action.value, who.role.value)
    return who


def hash_password(password: str) -> str:
    """A bcrypt hash of ``password`` for the users file."""
    if not isinstance(password, str) or len(password) < 8:
        raise InputError("password", "must be at least 8 characters")
    if len(password.encode("utf-8")) > 72:
        raise InputError("password", "must be at most 72 bytes (bcrypt's limit)")
    return bcrypt.hashpw(password.encode("utf-8"), bcrypt.gensalt(BCRYPT_ROUNDS)).decode("ascii")


def loopback(address: str | None) -> bool:
    """Whether a server bound to ``address`` is reachable from this machine only.

    Streamlit binds every interface when the address is empty, so only an explicit
    loopback name or address counts.
    """
    host = (address or "").strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_refusal(address: str | None, *, path: Path | None = None) -> str | None:
    """Why the dashboard must not serve on ``address``, or ``None`` when it may.

    Beyond loopback, every visitor without a users file would be a reviewer who may
    purge sessions and accept conflicts under any name, and memories hold what people
    told their agents: so an open address needs users, or an explicit ``ATLAS_ALLOW_OPEN=1``.
    """
    if loopback(address) or _flag(ALLOW_OPEN_ENV):
        return None
    try:
        if roles_enabled(path):
            return None
    except ConfigError as exc:
        return f"The users file is broken ({exc}); fix it before serving beyond this machine."
    where = address or "every network interface"
    return (
        f"Refusing to serve on {where} without users: anyone who can reach it could read every "
        "memory and purge, accept or approve under any name. Add a user with "
        "`atlas users add NAME --role reviewer` (writes .streamlit/secrets.toml, or "
        f"${USERS_FILE_ENV}), listen on 127.0.0.1 (the default of `make run`), or set "
        f"{ALLOW_OPEN_ENV}=1 on a network you trust."
    )
