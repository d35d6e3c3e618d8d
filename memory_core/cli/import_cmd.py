"""``atlas import FORMAT FILE... --out DIR``: benchmark files and chat logs to atlas-session/1."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from memory_core.cli.options import LazyChoices, positive_int

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")
_UNIT_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "import",
        help="convert LoCoMo, LongMemEval or OpenAI chat files to atlas-session/1",
        description="Convert conversation files to validated atlas-session/1 files named "
        "<conversation id>.json in --out. Every file is converted and validated before "
        "anything is written; nothing is written if any input is invalid. See "
        "docs/session-format.md for each format's field mapping.",
    )
    parser.add_argument(
        "format", choices=LazyChoices(_formats), metavar="FORMAT", help="one of %(choices)s"
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parser.add_argument("--out", type=Path, required=True, help="folder for the converted files")
    parser.add_argument("--force", action="store_true", help="overwrite existing files in --out")
    parser.add_argument(
        "--include-unanswerable",
        action="store_true",
        help="locomo, longmemeval: also import unanswerable questions (LoCoMo category 5, "
        "LongMemEval _abs) as key facts",
    )
    parser.add_argument(
        "--include-system",
        action="store_true",
        help="openai-chat: keep system, developer and tool messages as turns",
    )
    parser.add_argument(
        "--session-gap",
        type=duration,
        default=None,
        metavar="DURATION",
        help="openai-chat: a silence this long starts a new session when messages have no "
        "session field (e.g. 30m, 2h, 90s; default 30m)",
    )
    parser.add_argument(
        "--max-bytes",
        type=positive_int,
        default=None,
        help="refuse larger input files (default 1 GiB)",
    )
    parser.set_defaults(func=run)


def duration(text: str) -> float:
    """argparse type: ``90s``, ``30m``, ``2h``, ``1d`` or plain seconds, more than zero."""
    match = _DURATION.fullmatch(text)
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)] if match else 0.0
    if seconds <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive duration like 90s, 30m, 2h or 1d, got {text!r}"
        )
    return seconds


def run(args: argparse.Namespace) -> int:
    from memory_core.harness.importers import (
        IMPORTERS,
        ImportOptions,
        import_files,
        write_conversations,
    )

    defaults = ImportOptions()
    options = ImportOptions(
        include_unanswerable=args.include_unanswerable,
        include_system=args.include_system,
        session_gap=args.session_gap or defaults.session_gap,
        max_bytes=args.max_bytes or defaults.max_bytes,
    )
    converted = import_files(IMPORTERS[args.format], args.files, options)
    written = write_conversations([item for item, _ in converted], args.out, force=args.force)
    for (item, conv), path in zip(converted, written, strict=True):
        warning = item.warning()
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
        turns = sum(len(s.turns) for s in conv.sessions)
        left_out = []
        if item.unanswerable:
            verb = "included" if options.include_unanswerable else "left out"
            left_out.append(f"{item.unanswerable} unanswerable {verb}")
        if item.skipped_messages:
            left_out.append(f"{item.skipped_messages} messages left out")
        extra = "".join(f", {text}" for text in left_out)
        print(
            f"{path}: {turns} turns, {len(conv.sessions)} sessions, {len(conv.key_facts)} key "
            f"facts, {item.dropped_evidence} evidence ids and {item.dropped_facts} questions "
            f"dropped{extra} (from {item.source})"
        )
    print(f"{len(written)} conversation(s) written to {args.out}")
    return 0


def _formats() -> list[str]:
    from memory_core.harness.importers import IMPORTERS

    return list(IMPORTERS)
