"""``ElasticMemoryAtlas``: the in-process memory graph of an agent.

Writes embed, score importance, auto-link and index; reads rank hybrid evidence and
reinforce what they return; decay passes recompute every weight in one vectorised step
and evict what fell below the thresholds. Every public method takes one re-entrant
lock, so dashboard sessions and agent threads can share one atlas.

The class is assembled from one mixin per job: ``atlas_writes`` (add, merge, families),
``atlas_reads`` (retrieve and views), ``atlas_lifecycle`` (links, status, summaries, session
ends) over ``atlas_base`` (state, lock, decay, shared helpers). This module holds the
construction, reconfiguration, events and snapshots.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from pathlib import Path

from memory_core.embedding.base import Embedder
from memory_core.engine import snapshot
from memory_core.engine.atlas_lifecycle import LifecycleMixin
from memory_core.engine.atlas_reads import ReadMixin
from memory_core.engine.atlas_writes import WriteFilter
from memory_core.engine.clock import Clock, SystemClock
from memory_core.engine.config import AtlasConfig
from memory_core.engine.events import AtlasEvent, ConfigChanged, EventBus
from memory_core.engine.graph import EdgeStore
from memory_core.engine.importance import (
    IMPORTANCE_ESTIMATORS,
    ImportanceEstimator,
    information_density,
)
from memory_core.engine.index import LexicalIndex
from memory_core.engine.pending import Pending
from memory_core.engine.preload import preload_word_frequencies
from memory_core.engine.state import AtlasState, vector_index
from memory_core.engine.summarize import ExtractiveSummarizer, Summarizer
from memory_core.engine.table import NodeTable
from memory_core.errors import AtlasError, ConfigError, InputError

__all__ = ["ElasticMemoryAtlas", "WriteFilter"]


FIXED_AT_START = ("hnsw_threshold", "hnsw_m", "hnsw_ef_search", "hnsw_ef_construction", "seed")
"""Config fields ``reconfigure`` refuses to change: the indexes and RNG were built with them."""


class ElasticMemoryAtlas(LifecycleMixin, ReadMixin):
    """Elastic working/session memory for one agent process."""

    def __init__(
        self,
        config: AtlasConfig | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        importance: ImportanceEstimator | str = "density",
        summarizer: Summarizer | None = None,
        write_filter: WriteFilter | None = None,
    ) -> None:
        cfg = config if config is not None else AtlasConfig()
        if not isinstance(cfg, AtlasConfig):
            raise InputError("config", f"must be an AtlasConfig, got {type(cfg).__name__}")
        if isinstance(importance, str):
            if importance not in IMPORTANCE_ESTIMATORS:
                raise InputError("importance", f"must be one of {', '.join(IMPORTANCE_ESTIMATORS)}")
            importance = IMPORTANCE_ESTIMATORS[importance]
        self._word_frequencies = importance is information_density
        if self._word_frequencies:  # off the first add's path (memory_core.engine.preload),
            preload_word_frequencies()  # and alongside the embedding model's load
        if embedder is None:
            from memory_core.embedding.minilm import default_embedder

            embedder = default_embedder()
        table = NodeTable()
        clock = clock if clock is not None else SystemClock()
        self._s = AtlasState(
            config=cfg,
            embedder=embedder,
            clock=clock,
            table=table,
            edges=EdgeStore(table),
            bus=EventBus(),
            rng=random.Random(cfg.seed),
            vectors=vector_index(cfg, embedder.dim),
            lexical=LexicalIndex(),
            last_decay=clock.now(),
        )
        self._importance = importance
        self._summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self._write_filter = write_filter
        self._pending = Pending(self._s)
        self._lock = self._pending.lock

    def reconfigure(self, config: AtlasConfig) -> None:
        """Use ``config`` from now on (decay, forgetting, linking, retrieval parameters).

        The next decay pass recomputes every weight under it. Index fields and the seed
        shaped structures built at start and must stay as they are.

        Raises:
            ConfigError: ``config`` changes a field fixed at start (``FIXED_AT_START``).
        """
        if not isinstance(config, AtlasConfig):
            raise InputError("config", f"must be an AtlasConfig, got {type(config).__name__}")
        with self._lock:
            for name in FIXED_AT_START:
                if getattr(config, name) != getattr(self._s.config, name):
                    raise ConfigError(
                        name, getattr(config, name), "cannot change on a running atlas"
                    )
            self._s.config = config
            if self._s.bus.active:
                self._emit(ConfigChanged, config=config.to_dict())

    def settle(self) -> None:
        """Make the vector insert an add left to the insert worker now (``engine.pending``).

        Every other call does this first anyway, so nothing searches an index without it;
        this is for code that must know it is made (a test, a benchmark's timing)."""
        with self._lock:
            pass  # taking the lock makes it

    def __len__(self) -> int:
        return len(self._s.table)

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and node_id in self._s.table.slot_of

    def subscribe(
        self,
        callback: Callable[[AtlasEvent], None],
        types: Iterable[type[AtlasEvent]] | None = None,
    ) -> Callable[[], None]:
        """Receive every event, or those of ``types`` alone (events nobody reads are not
        built); returns a function that unsubscribes."""
        return self._s.bus.subscribe(callback, types)

    @property
    def events(self) -> EventBus:
        return self._s.bus

    # ------------------------------------------------------------------ snapshots
    def save_snapshot(self, path: str | Path) -> Path:
        """Write nodes, edges, weights, embeddings, config and clock time to one file.

        Only a short copy is taken under the lock (the vectors are gathered after it, a
        chunk at a time; ``snapshot.capture``); encoding and writing happen outside it,
        so a recorder's periodic snapshot barely delays the agent's own calls.
        """
        with self._lock:
            frozen = snapshot.freeze(self._s)
        return snapshot.write(snapshot.complete(frozen, self._lock), Path(path))

    @classmethod
    def load_snapshot(
        cls, path: str | Path, *, embedder: Embedder | None = None, clock: Clock | None = None
    ) -> ElasticMemoryAtlas:
        """Rebuild an atlas exactly as saved (its own embedder and clock may be given)."""
        try:
            data = snapshot.read(Path(path))
            atlas = cls(data.config, embedder=embedder, clock=clock)
            with atlas._lock:
                snapshot.restore(atlas._s, data)
        except AtlasError:
            raise
        except (LookupError, TypeError, ValueError, AttributeError) as exc:
            # a readable archive whose metadata was tampered with inside
            raise InputError("snapshot", f"{path} holds malformed data ({exc!r})") from exc
        return atlas
