"""Roles, identities, the users file written by ``atlas users add`` and read-only mode."""

from __future__ import annotations

import io
import stat
import tomllib
from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.dashboard import access
from memory_core.dashboard.access import (
    ANONYMOUS,
    Action,
    Identity,
    Role,
    authenticate,
    denial,
    require,
    visitor,
)
from memory_core.errors import AccessDeniedError, AtlasError, ConfigError, InputError


@pytest.fixture
def users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty users file location named by ATLAS_USERS_FILE; cheap bcrypt rounds."""
    monkeypatch.setattr(access, "BCRYPT_ROUNDS", 4)
    path = tmp_path / "secrets.toml"
    monkeypatch.setenv(access.USERS_FILE_ENV, str(path))
    monkeypatch.delenv(access.READ_ONLY_ENV, raising=False)
    return path


def add_user(monkeypatch: pytest.MonkeyPatch, name: str, role: str, password: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
    return main(["users", "add", name, "--role", role, "--password-stdin"])


def test_cli_writes_bcrypt_hashes_and_keeps_other_secrets(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users.write_text('openai_key = "keep-me"\n')
    assert add_user(monkeypatch, "alice", "reviewer", "correct horse") == 0
    assert add_user(monkeypatch, "bob", "viewer", "battery staple") == 0
    data = tomllib.loads(users.read_text())
    assert data["openai_key"] == "keep-me"
    assert data["users"]["alice"]["role"] == "reviewer"
    digest = data["users"]["alice"]["password_hash"]
    assert digest.startswith("$2b$") and "correct horse" not in users.read_text()
    assert stat.S_IMODE(users.stat().st_mode) == 0o600
    # an existing user is not silently replaced; --replace changes the role
    assert add_user(monkeypatch, "alice", "admin", "correct horse") == 2
    monkeypatch.setattr("sys.stdin", io.StringIO("new password!\n"))
    assert main(["users", "add", "alice", "--role", "admin", "--password-stdin", "--replace"]) == 0
    assert authenticate("alice", "new password!").role is Role.ADMIN
    assert main(["users", "remove", "bob"]) == 0
    assert set(access.load_users()) == {"alice"}


def test_authenticate_checks_the_password_read_at_call_time(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_user(monkeypatch, "carol", "viewer", "s3cret-pass")
    who = authenticate("carol", "s3cret-pass")
    assert who == Identity("carol", Role.VIEWER, authenticated=True)
    for name, password in (("carol", "wrong-pass"), ("nobody", "s3cret-pass"), ("carol", "")):
        with pytest.raises(AccessDeniedError) as caught:
            authenticate(name, password)
        assert "login" in str(caught.value)
    other = users.parent / "other.toml"
    monkeypatch.setenv(access.USERS_FILE_ENV, str(other))  # a different file, no restart
    with pytest.raises(AccessDeniedError):
        authenticate("carol", "s3cret-pass")


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        (Role.VIEWER, {Action.VIEW}),
        (Role.REVIEWER, {Action.VIEW, Action.WRITE, Action.REVIEW, Action.IMPORT}),
        (Role.ADMIN, set(Action)),
    ],
)
def test_role_matrix(users: Path, role: Role, allowed: set[Action]) -> None:
    who = Identity("dana", role, authenticated=True)
    for action in Action:
        if action in allowed:
            assert require(who, action) is who
        else:
            with pytest.raises(AccessDeniedError) as caught:
                require(who, action)
            assert (caught.value.action, caught.value.role) == (action.value, role.value)


def test_review_needs_a_name_and_viewers_cannot_approve(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no users file: visitors are reviewers under the name they type
    anonymous = visitor("")
    assert anonymous == Identity(ANONYMOUS, Role.REVIEWER)
    assert denial(anonymous, Action.WRITE) is None  # the playground works without a name
    assert "name" in (denial(anonymous, Action.REVIEW) or "")
    assert require(visitor("erin"), Action.REVIEW).name == "erin"
    # with a users file, a visitor is a viewer until logged in, whatever name is typed
    add_user(monkeypatch, "frank", "reviewer", "frank-pass")
    assert visitor("erin") == Identity(ANONYMOUS, Role.VIEWER)
    with pytest.raises(AccessDeniedError):
        require(visitor("erin"), Action.REVIEW)
    with pytest.raises(AccessDeniedError):
        require(None, Action.WRITE)
    assert require(None, Action.VIEW).role is Role.VIEWER


def test_read_only_mode_refuses_every_mutation_even_for_admins(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = Identity("root", Role.ADMIN, authenticated=True)
    monkeypatch.setenv(access.READ_ONLY_ENV, "1")
    assert require(admin, Action.VIEW) is admin
    for action in set(Action) - {Action.VIEW}:
        assert "read-only" in (denial(admin, action) or "")
        with pytest.raises(AccessDeniedError):
            require(admin, action)
    monkeypatch.setenv(access.READ_ONLY_ENV, "0")
    assert require(admin, Action.ADMIN) is admin


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("users = 3\n", "users"),
        ("[users.x]\nrole = 'viewer'\n", "users.x"),
        ("[users.x]\nrole = 'viewer'\npassword_hash = 'plain'\n", "password_hash"),
        ("[users.x]\nrole = 'boss'\npassword_hash = '$2b$04$abc'\n", "role"),
        ("[users\n", access.USERS_FILE_ENV),
    ],
)
def test_a_broken_users_file_names_the_problem(users: Path, text: str, field: str) -> None:
    users.write_text(text)
    with pytest.raises(ConfigError) as caught:
        access.load_users()
    assert field in str(caught.value)
    assert "$2b$04$abc" not in str(caught.value)


@pytest.mark.parametrize(
    ("argv", "stdin", "problem"),
    [
        (["users", "add", "", "--role", "viewer"], "long enough pw", "name"),
        (["users", "add", "anonymous", "--role", "viewer"], "long enough pw", "reserved"),
        (["users", "add", "gina", "--role", "viewer"], "short", "at least 8"),
        (["users", "add", "gina", "--role", "viewer"], "x" * 80, "72 bytes"),
        (["users", "remove", "ghost"], "", "no such user"),
    ],
)
def test_cli_bad_input_is_a_clear_error(
    users: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    stdin: str,
    problem: str,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin + "\n"))
    extra = ["--password-stdin"] if argv[1] == "add" else []
    assert main([*argv, *extra]) == 2
    assert problem in capsys.readouterr().err
    assert not users.exists()


def test_errors_are_atlas_errors() -> None:
    assert issubclass(AccessDeniedError, AtlasError)
    with pytest.raises(InputError):
        access.check_name("x" * 65)
