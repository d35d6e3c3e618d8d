"""Options shared by subcommands: ``--params FILE.toml|PRESET``, ``--set key=value``,
``--embedder``, and the one way they become a config and an embedder.

Building the parser must stay cheap (``atlas --help`` should not load torch, Optuna or
SQLAlchemy), so choices that live in heavy modules are read lazily (``LazyChoices``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

from memory_core.embedding.base import Embedder
from memory_core.embedding.registry import DEFAULT_EMBEDDER, EMBEDDERS, make_embedder
from memory_core.engine.config import PRESETS, AtlasConfig, preset


class LazyChoices(Sequence[str]):
    """argparse ``choices`` loaded on first use, i.e. only when a value is checked or help shown.

    Pass ``metavar=`` with it: argparse otherwise lists the choices while adding the argument.
    ``%(choices)s`` in the help text is expanded lazily too.
    """

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load = load
        self._values: tuple[str, ...] | None = None

    def _all(self) -> tuple[str, ...]:
        if self._values is None:
            self._values = tuple(sorted(self._load()))
        return self._values

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def add_overrides(
    parser: argparse.ArgumentParser,
    help: str = "override one config field, e.g. --set max_nodes=150 (repeatable)",
) -> None:
    """``--set KEY=VALUE`` (repeatable), collected in ``args.overrides``."""
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help=help
    )


def add_embedder_option(parser: argparse.ArgumentParser) -> None:
    """``--embedder NAME``, one of ``memory_core.embedding.EMBEDDERS``."""
    parser.add_argument(
        "--embedder",
        choices=list(EMBEDDERS),
        default=DEFAULT_EMBEDDER,
        help="minilm (default, real model, cached) or hashing (fast fake for tests only)",
    )


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """``--params``, ``--set`` and ``--embedder``; read back with ``config_from_args``."""
    parser.add_argument(
        "--params",
        help="TOML file with AtlasConfig fields (an [atlas] table or top level), or a preset "
        "name (seed-linear, tuned, ...)",
    )
    add_overrides(parser)
    add_embedder_option(parser)


def load_config(params: str | Path | None, overrides: Sequence[str] = ()) -> AtlasConfig:
    """A TOML file, or a preset name (``seed-linear``, ``tuned``, ...), then ``--set`` values."""
    if params is None:
        config = AtlasConfig()
    elif str(params) in PRESETS and not Path(params).exists():
        config = preset(str(params))
    else:
        config = AtlasConfig.from_toml(params)
    return config.with_overrides(list(overrides)) if overrides else config


def config_from_args(args: argparse.Namespace) -> AtlasConfig:
    """The config of ``--params`` and ``--set``."""
    return load_config(args.params, args.overrides)


def embedder_from_args(args: argparse.Namespace) -> Embedder:
    """The embedder of ``--embedder``."""
    return make_embedder(args.embedder)
