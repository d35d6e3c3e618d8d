"""``atlas config``: show presets and every configuration field with its default and range."""

from __future__ import annotations

import argparse

from memory_core.engine.config import PRESET_DESCRIPTIONS, PRESETS, field_specs, preset


def markdown_table() -> str:
    """The README's configuration table, generated from the dataclass itself."""
    rows = ["| field | group | default | allowed | meaning |", "|---|---|---|---|---|"]
    for spec in field_specs():
        rows.append(
            f"| `{spec['name']}` | {spec['group']} | `{spec['default']}` | {spec['allowed']} | {spec['doc']} |"
        )
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    if args.preset:
        print(preset(args.preset).to_toml(), end="")
    elif args.markdown:
        print(markdown_table())
    else:
        print("presets:")
        for name in PRESETS:
            print(f"  {name:12} {PRESET_DESCRIPTIONS[name]}")
        for spec in field_specs():
            print(f"{spec['name']:26} = {spec['default']!s:12} {spec['doc']}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("config", help="list configuration fields, defaults and presets")
    parser.add_argument("--markdown", action="store_true", help="print the README table")
    parser.add_argument("--preset", help="print a preset as TOML (usable with --params)")
    parser.set_defaults(func=run)
