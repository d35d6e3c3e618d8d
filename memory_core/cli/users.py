"""``atlas users``: manage the dashboard's users file (roles and bcrypt-hashed passwords)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from memory_core.dashboard.access import (
    Role,
    check_name,
    hash_password,
    load_users,
    parse_role,
    users_file,
)
from memory_core.errors import ConfigError, InputError


def _read_table(path: Path) -> dict[str, Any]:
    """The whole file (it may hold other Streamlit secrets, which are kept)."""
    if not path.is_file():
        return {}
    load_users(path)  # refuse to rewrite a file whose users are broken
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _write_table(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # secrets: owner only
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(tomli_w.dumps(data))
    os.replace(tmp, path)


def _password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass(f"Password for {args.name}: ")
    if getpass.getpass("Repeat: ") != first:
        raise InputError("password", "the two entries differ")
    return first


def run_add(args: argparse.Namespace) -> int:
    name = check_name(args.name)
    role = parse_role(args.role)
    path = Path(args.file) if args.file else users_file()
    data = _read_table(path)
    users = data.setdefault("users", {})
    if name in users and not args.replace:
        raise InputError("name", f"user {name!r} exists in {path}; pass --replace to change it")
    users[name] = {"role": role.value, "password_hash": hash_password(_password(args))}
    _write_table(path, data)
    print(f"{name}: {role.value} in {path}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else users_file()
    data = _read_table(path)
    if args.name not in data.get("users", {}):
        raise ConfigError("name", args.name, f"no such user in {path}")
    del data["users"][args.name]
    _write_table(path, data)
    print(f"removed {args.name} from {path}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else users_file()
    for name, entry in sorted(load_users(path).items()):
        print(f"{name:32} {entry.role.value}")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("users", help="dashboard users, roles and passwords")
    sub = parser.add_subparsers(dest="users_command", required=True)
    file_help = "users TOML file (default: $ATLAS_USERS_FILE or .streamlit/secrets.toml)"

    add = sub.add_parser("add", help="add (or with --replace, change) a user")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=[r.value for r in Role])
    add.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    add.add_argument("--replace", action="store_true", help="overwrite an existing user")
    add.add_argument("--file", help=file_help)
    add.set_defaults(func=run_add)

    remove = sub.add_parser("remove", help="remove a user")
    remove.add_argument("name")
    remove.add_argument("--file", help=file_help)
    remove.set_defaults(func=run_remove)

    listing = sub.add_parser("list", help="list users and roles (never hashes)")
    listing.add_argument("--file", help=file_help)
    listing.set_defaults(func=run_list)
