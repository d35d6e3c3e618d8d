"""``atlas validate PATH...``: check session files and report every problem."""

from __future__ import annotations

import argparse
from pathlib import Path

from memory_core.cli.options import positive_int
from memory_core.errors import SessionFormatError
from memory_core.harness.session_format import DEFAULT_MAX_BYTES, load_conversation, session_files


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check atlas-session/1 files",
        description="Check atlas-session/1 files (or folders of them). Prints OK per valid "
        "file and every problem of an invalid one; exits 1 if any file is invalid.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="file or folder")
    parser.add_argument(
        "--max-bytes",
        type=positive_int,
        default=DEFAULT_MAX_BYTES,
        help=f"refuse files larger than this (default {DEFAULT_MAX_BYTES})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    valid = invalid = 0
    for given in args.paths:
        try:
            files = session_files([given])
        except SessionFormatError as exc:
            invalid += 1
            _report_invalid(str(given), exc.problems)
            continue
        for path in files:
            try:
                conversation = load_conversation(path, max_bytes=args.max_bytes)
            except SessionFormatError as exc:
                invalid += 1
                _report_invalid(str(path), exc.problems)
                continue
            valid += 1
            turns = sum(len(s.turns) for s in conversation.sessions)
            print(
                f"OK {path}: {len(conversation.sessions)} sessions, {turns} turns, "
                f"{len(conversation.key_facts)} key facts"
            )
    print(f"{valid} valid, {invalid} invalid")
    return 1 if invalid else 0


def _report_invalid(name: str, problems: list[str]) -> None:
    print(f"INVALID {name}: {len(problems)} problem(s)")
    for problem in problems:
        print(f"  {problem}")
