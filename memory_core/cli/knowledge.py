"""``atlas knowledge``: import items from CSV/JSON, list them, load the sample base."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from memory_core.cli.options import LazyChoices, add_embedder_option, embedder_from_args

if TYPE_CHECKING:
    from memory_core.knowledge import KnowledgeBase

# The knowledge package pulls in SQLAlchemy and Alembic: imported by the commands, not here.


def _statuses() -> list[str]:
    from memory_core.knowledge import ItemStatus

    return [s.value for s in ItemStatus]


def _knowledge_base(args: argparse.Namespace) -> KnowledgeBase:
    from memory_core.knowledge import KnowledgeBase, KnowledgeSettings
    from memory_core.store.engine import open_database

    database = open_database(args.db)
    settings = KnowledgeSettings(trusted_sources=frozenset(args.trust or ()))
    return KnowledgeBase(database.session, embedder=embedder_from_args(args), settings=settings)


def run_import(args: argparse.Namespace) -> int:
    from memory_core.knowledge import import_file

    report = import_file(_knowledge_base(args), args.file, actor=args.actor)
    for item in report.imported:
        print(f"imported {item.key} v{item.version} ({item.status.value})")
    for error in report.errors:
        print(f"rejected {error}", file=sys.stderr)
    print(f"{len(report.imported)} imported, {len(report.rejected_rows)} row(s) rejected")
    return 1 if report.errors else 0


def run_list(args: argparse.Namespace) -> int:
    from memory_core.knowledge import ItemStatus

    kb = _knowledge_base(args)
    status = ItemStatus(args.status) if args.status else None
    with kb.unit("list knowledge") as unit:
        items = unit.items.items(status=status, key=args.key)
    for item in items:
        expires = item.expires_at.date().isoformat() if item.expires_at else "-"
        print(
            f"{item.key:32} v{item.version:8} {item.status.value:15} {item.label:32} "
            f"conf {item.confidence:.2f}  {item.effective_from.date().isoformat()} .. {expires}"
        )
    return 0


def run_sample(args: argparse.Namespace) -> int:
    from memory_core.knowledge.sample import load_sample_knowledge

    report = load_sample_knowledge(_knowledge_base(args))
    print(
        f"sample knowledge: {report.added_items} item version(s) and "
        f"{report.added_citations} citation(s) added, {report.skipped} already present"
    )
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="database URL (default: $ATLAS_DATABASE_URL or data/atlas.db)")
    add_embedder_option(parser)
    parser.add_argument(
        "--trust", action="append", metavar="SOURCE", help="source name activated without review"
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("knowledge", help="long-term knowledge base: import, list, sample")
    commands = parser.add_subparsers(dest="knowledge_command", required=True)

    imp = commands.add_parser("import", help="import items from a .csv or .json file")
    imp.add_argument("file", help="CSV (header = item fields) or JSON (list of items)")
    imp.add_argument("--actor", default="cli-import", help="recorded as submitter in the audit")
    _common(imp)
    imp.set_defaults(func=run_import)

    lst = commands.add_parser("list", help="list item versions")
    lst.add_argument(
        "--status", choices=LazyChoices(_statuses), metavar="STATUS", help="one of %(choices)s"
    )
    lst.add_argument("--key", help="only versions of this key")
    _common(lst)
    lst.set_defaults(func=run_list)

    sample = commands.add_parser("sample", help="load the shipped sample knowledge (idempotent)")
    _common(sample)
    sample.set_defaults(func=run_sample)
