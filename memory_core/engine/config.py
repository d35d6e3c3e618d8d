"""Validated engine configuration and named presets.

One flat, frozen dataclass so that a field name is the same everywhere: in TOML files,
in ``atlas simulate --set key=value``, in the tuning page's forms and in Optuna sweeps.
Each field's metadata holds its group, meaning and allowed range; validation, the README
table and the dashboard forms are all driven by that one description.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, asdict, dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import tomli_w

from memory_core.errors import ConfigError

DECAY_STRATEGIES = ("linear", "exponential", "ebbinghaus", "power")
SESSION_END_MODES = ("keep", "fade", "purge", "summarize")


def _f(
    default: Any,
    group: str,
    doc: str,
    *,
    low: float | None = None,
    high: float | None = None,
    choices: tuple[str, ...] | None = None,
    optional: bool = False,
) -> Any:
    return field(
        default=default,
        metadata={
            "group": group,
            "doc": doc,
            "low": low,
            "high": high,
            "choices": choices,
            "optional": optional,
        },
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class AtlasConfig:
    """Every tunable of the engine. Times are in hours unless the name says seconds."""

    # capacity
    max_nodes: int | None = _f(
        10_000,
        "capacity",
        "Hard cap on memories; lowest score evicted first (None = unlimited).",
        low=1,
        optional=True,
    )
    max_content_chars: int = _f(
        8_000, "capacity", "Longest memory text accepted.", low=1, high=1_000_000
    )
    memory_watermark: float = _f(
        0.70,
        "capacity",
        "Fraction of RAM used by the process above which cleanup becomes aggressive.",
        low=0.05,
        high=1.0,
    )
    # weights and decay
    decay_strategy: str = _f(
        "power",
        "decay",
        "Decay curve applied to a memory's strength since its last access.",
        choices=DECAY_STRATEGIES,
    )
    decay_rate: float = _f(
        0.05,
        "decay",
        "Decay per hour (linear: weight units/h; exponential: 1/h; power: exponent).",
        low=0.0,
        high=100.0,
    )
    stability_hours: float = _f(
        24.0,
        "decay",
        "Ebbinghaus stability of a never-recalled memory; each recall adds this much again.",
        low=1e-3,
        high=1e6,
    )
    decay_interval_seconds: float = _f(
        600.0,
        "decay",
        "Automatic decay pass after this much clock time since the last one (0 = only when asked).",
        low=0.0,
    )
    weight_floor: float = _f(0.1, "decay", "Lowest weight a memory can have.", low=0.0, high=100.0)
    weight_cap: float = _f(3.0, "decay", "Highest weight a memory can have.", low=0.0, high=100.0)
    reinforce_factor: float = _f(
        1.02,
        "decay",
        "Strength multiplier when a memory is retrieved (1 = no reinforcement).",
        low=1.0,
        high=10.0,
    )
    frequency_gain: float = _f(
        0.1, "decay", "Weight added per log(access_count + 1).", low=0.0, high=10.0
    )
    recency_gain: float = _f(
        0.0, "decay", "Weight added as gain / (hours since access + 1).", low=0.0, high=10.0
    )
    association_gain: float = _f(
        0.05,
        "decay",
        "Weight added per unit of neighbours' weight x edge strength (one PageRank-like step).",
        low=0.0,
        high=10.0,
    )
    base_weight_min: float = _f(
        0.2, "decay", "Initial strength of a memory of importance 0.", low=0.0, high=100.0
    )
    base_weight_max: float = _f(
        1.8, "decay", "Initial strength of a memory of importance 1.", low=0.0, high=100.0
    )
    # forgetting
    evict_threshold: float = _f(
        0.15,
        "forgetting",
        "Memories whose weight falls below this are evicted at the next decay pass.",
        low=0.0,
        high=100.0,
    )
    orphan_threshold: float = _f(
        0.5,
        "forgetting",
        "Isolated memories (no edges) below this weight are removed.",
        low=0.0,
        high=100.0,
    )
    orphan_grace_hours: float = _f(
        1.0,
        "forgetting",
        "Minimum age before an isolated memory can be removed as an orphan.",
        low=0.0,
    )
    working_memory_size: int = _f(
        3,
        "forgetting",
        "The last N memories of each session are never evicted.",
        low=0,
        high=10_000,
    )
    merge_threshold: float = _f(
        0.92,
        "forgetting",
        "Cosine similarity above which a new memory merges into an existing one of the same session.",
        low=0.0,
        high=1.0,
    )
    default_ttl_hours: float | None = _f(
        None,
        "forgetting",
        "Expiry of memories added without their own TTL (None = never).",
        low=0.0,
        optional=True,
    )
    fade_strength: float = _f(
        0.05,
        "forgetting",
        "Strength a session's memories drop to when it ends in 'fade' mode.",
        low=0.0,
        high=100.0,
    )
    summary_downweight: float = _f(
        0.7,
        "forgetting",
        "Strength multiplier for memories that a summary now covers.",
        low=0.0,
        high=1.0,
    )
    session_end_mode: str = _f(
        "summarize",
        "forgetting",
        "Default action of end_session: keep, fade, purge or summarize (summary then fade).",
        choices=SESSION_END_MODES,
    )
    family_fold_at: int | None = _f(
        8,
        "forgetting",
        "Lines of one template (differing only in numbers, ids, times) a session holds before "
        "the older ones fold into one summary with their ranges (None = never fold).",
        low=2,
        high=100_000,
        optional=True,
    )
    # linking
    link_threshold: float = _f(
        0.55,
        "linking",
        "Cosine similarity above which a new memory is linked similar_to an existing one.",
        low=0.0,
        high=1.0,
    )
    max_auto_links: int = _f(
        3, "linking", "Most similar_to edges created per new memory.", low=0, high=50
    )
    link_previous: bool = _f(
        True, "linking", "Link each memory 'after' the previous memory of its session."
    )
    # retrieval
    similarity_weight: float = _f(
        0.8,
        "retrieval",
        "Share of relevance (fused dense + lexical + graph) in the final score.",
        low=0.0,
        high=1.0,
    )
    weight_weight: float = _f(
        0.4,
        "retrieval",
        "Share of the memory's weight (scaled by weight_cap) in the final score.",
        low=0.0,
        high=1.0,
    )
    recency_weight: float = _f(
        0.0, "retrieval", "Share of recency in the final score.", low=0.0, high=1.0
    )
    recency_half_life_hours: float = _f(
        24.0, "retrieval", "Hours after which the recency term halves.", low=1e-6
    )
    lexical_share: float = _f(
        0.5,
        "retrieval",
        "Share of BM25 (saturated: bm25 / (bm25 + lexical_saturation)) in relevance; "
        "the rest is cosine.",
        low=0.0,
        high=1.0,
    )
    lexical_saturation: float = _f(
        3.0,
        "retrieval",
        "BM25 score at which the lexical part of relevance is half full.",
        low=1e-3,
        high=1000.0,
    )
    unrelated_cosine: float = _f(
        0.25,
        "retrieval",
        "Cosine that unrelated texts reach (MiniLM: 95th percentile, benchmarks/unrelated_cosine"
        ".py); weight and recency count only as relevance rises above it (0 = no gate).",
        low=0.0,
        high=1.0,
    )
    rrf_k: float = _f(
        60.0,
        "retrieval",
        "Reciprocal-rank-fusion constant (orders the hits whose neighbours graph expansion adds).",
        low=1.0,
        high=1000.0,
    )
    dense_candidates: int = _f(
        40, "retrieval", "Vector-search candidates per query before fusion.", low=1, high=10_000
    )
    lexical_candidates: int = _f(
        40, "retrieval", "BM25 candidates per query before fusion.", low=0, high=10_000
    )
    graph_expansion: int = _f(
        8,
        "retrieval",
        "Top fused hits whose neighbours are added as graph candidates (0 = off).",
        low=0,
        high=1_000,
    )
    entity_route: bool = _f(
        False,
        "retrieval",
        "The agent loop hints the memories that mention an entity the query names (from the "
        "task context graph, so only with context_graph on). Off: it lowered LoCoMo dev "
        "recall@10 (docs/context.md).",
    )
    cross_session_factor: float = _f(
        0.6,
        "retrieval",
        "Score multiplier for memories from other sessions when cross-session retrieval is asked.",
        low=0.0,
        high=1.0,
    )
    min_confidence: float = _f(
        0.0, "retrieval", "Memories below this confidence are never returned.", low=0.0, high=1.0
    )
    # index
    hnsw_threshold: int = _f(
        20_000,
        "index",
        "A session's vector index switches from exact to HNSW above this many memories.",
        low=1,
    )
    hnsw_m: int = _f(32, "index", "HNSW graph degree.", low=4, high=256)
    hnsw_ef_search: int = _f(
        128, "index", "HNSW search breadth (higher = better recall, slower).", low=8, high=4096
    )
    hnsw_ef_construction: int = _f(64, "index", "HNSW build breadth.", low=8, high=4096)
    hnsw_link_ef_search: int = _f(
        128,
        "index",
        "HNSW search breadth of an add's merge and auto-link search (a few neighbours, "
        "where a retrieval asks for dozens).",
        low=8,
        high=4096,
    )
    # agent-loop rules (the second seed's memory state orchestrator; see docs/agent-loop.md)
    episode_after_memories: int | None = _f(
        50,
        "rules",
        "A session holding more short-term memories than this folds its oldest ones into an "
        "episode summary (None = off).",
        low=2,
        high=100_000,
        optional=True,
    )
    review_after_corrections: int | None = _f(
        3,
        "rules",
        "A statement corrected (superseded) this many times in a row goes to knowledge review "
        "(None = off).",
        low=1,
        high=1_000,
        optional=True,
    )
    forget_on_request: bool = _f(
        True, "rules", "'Forget what I just said' soft-deletes what it refers to."
    )
    forget_intent_similarity: float = _f(
        0.55,
        "rules",
        "Cosine to the nearest forget-request example above which an input is a request.",
        low=0.0,
        high=1.0,
    )
    forget_recent: int = _f(
        1,
        "rules",
        "How many of the session's most recent user memories 'forget that' refers to.",
        low=1,
        high=100,
    )
    context_graph: bool = _f(
        True,
        "rules",
        "Keep a task context graph (goals, constraints, entities) of each user's turns (of "
        "the session's when a turn names no user) and give the responder the constraints in "
        "force.",
    )
    context_max_constraints: int = _f(
        7,
        "rules",
        "A turn whose context graph holds more constraints in force than this asks for an "
        "episode summary of its session.",
        low=1,
        high=10_000,
    )
    context_max_path_length: float = _f(
        3.0,
        "rules",
        "A turn whose context graph's mean path between entities is longer than this asks "
        "for an episode summary of its session.",
        low=1.0,
        high=1_000.0,
    )
    # determinism
    seed: int = _f(
        0, "determinism", "Seed for ids and any randomness, so runs replay exactly.", low=0
    )

    def __post_init__(self) -> None:
        for name, rule in _rules().items():
            rule.check(getattr(self, name))
        if self.weight_floor > self.weight_cap:
            raise ConfigError(
                "weight_floor", self.weight_floor, f"must be <= weight_cap ({self.weight_cap})"
            )
        if self.base_weight_min > self.base_weight_max:
            raise ConfigError(
                "base_weight_min",
                self.base_weight_min,
                f"must be <= base_weight_max ({self.base_weight_max})",
            )
        if not self.weight_floor <= self.base_weight_max <= self.weight_cap:
            raise ConfigError(
                "base_weight_max",
                self.base_weight_max,
                f"must lie in [weight_floor, weight_cap] = [{self.weight_floor}, {self.weight_cap}]",
            )
        if self.evict_threshold > self.weight_cap:
            raise ConfigError(
                "evict_threshold",
                self.evict_threshold,
                f"must be <= weight_cap ({self.weight_cap})",
            )
        if self.similarity_weight + self.weight_weight + self.recency_weight <= 0:
            raise ConfigError(
                "similarity_weight",
                self.similarity_weight,
                "similarity_weight + weight_weight + recency_weight must be > 0",
            )

    # -- construction helpers -------------------------------------------------
    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any], base: AtlasConfig | None = None
    ) -> AtlasConfig:
        """Build from a mapping (e.g. TOML); unknown keys are an error, not silently ignored."""
        known = field_names()
        for key in values:
            if key not in known:
                raise ConfigError(
                    str(key),
                    values[key],
                    f"unknown field; known fields: {', '.join(sorted(known))}",
                )
        coerced = {k: coerce_value(k, v) for k, v in values.items()}
        return replace(base or cls(), **coerced)

    @classmethod
    def from_toml(cls, path: str | Path, base: AtlasConfig | None = None) -> AtlasConfig:
        """Read a TOML file; a ``[atlas]`` table is used if present, else the top level."""
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError("params", str(path), f"not a readable TOML file ({exc})") from exc
        table = data.get("atlas", data)
        if "preset" in table:
            table = dict(table)
            base = preset(str(table.pop("preset")))
        return cls.from_mapping(table, base)

    def with_overrides(self, assignments: list[str]) -> AtlasConfig:
        """Apply ``key=value`` strings as given on the command line."""
        values: dict[str, Any] = {}
        for item in assignments:
            key, sep, raw = item.partition("=")
            if not sep:
                raise ConfigError(item, item, "expected key=value")
            values[key.strip()] = parse_literal(raw.strip())
        return AtlasConfig.from_mapping(values, self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_toml(self) -> str:
        """TOML text that ``from_toml`` reads back to an equal config (TOML has no null: "none")."""
        table = {k: "none" if v is None else v for k, v in self.to_dict().items()}
        return tomli_w.dumps({"atlas": table})


def field_names() -> set[str]:
    return set(_rules())


def field_specs() -> list[dict[str, Any]]:
    """Name, default, type, group, doc, range and allowed text of every field (README, forms)."""
    specs = []
    for f in fields(AtlasConfig):
        default = f.default if f.default is not MISSING else None
        allowed = _rules()[f.name].allowed()
        specs.append(
            {
                "name": f.name,
                "default": default,
                "type": str(f.type),
                **f.metadata,
                "allowed": allowed,
            }
        )
    return specs


_NONE_WORDS = ("none", "null")


def parse_literal(raw: str) -> Any:
    """Parse a command-line value: TOML scalars, plus ``none`` for optional fields."""
    if raw.lower() in _NONE_WORDS:
        return None
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def coerce_value(name: str, value: Any) -> Any:
    """Accept ints for float fields and "none" for optional ones; reject the rest in validation."""
    return _rules()[name].coerce(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, float)


# Base type of a field -> (accepts a value, what to say when it does not).
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "int": (_is_int, "an integer"),
    "float": (_is_number, "a number"),
    "str": (lambda v: isinstance(v, str), "a string"),
}


@dataclass(frozen=True, slots=True)
class _Rule:
    """What one field accepts, read once from its type and metadata; the only type tests."""

    name: str
    kind: str
    optional: bool
    low: float | None
    high: float | None
    choices: tuple[str, ...] | None

    @classmethod
    def of(cls, f: Field[Any]) -> _Rule:
        m = f.metadata
        kind = str(f.type).split("|")[0].strip()
        return cls(f.name, kind, bool(m["optional"]), m["low"], m["high"], m["choices"])

    def span(self) -> str:
        lo = "-inf" if self.low is None else self.low
        hi = "inf" if self.high is None else self.high
        return f"[{lo}, {hi}]"

    def allowed(self) -> str:
        """The README's wording of what the field accepts."""
        if self.choices:
            return " / ".join(self.choices)
        if self.kind == "bool":
            return "true / false"
        return self.span() + (" or none" if self.optional else "")

    def coerce(self, value: Any) -> Any:
        if value is None or (
            self.optional and isinstance(value, str) and value.lower() in _NONE_WORDS
        ):
            return None
        if self.kind == "float" and _is_int(value):
            return float(value)
        return value

    def check(self, value: Any) -> None:
        if value is None:
            if not self.optional:
                self._fail(value, f"must not be None; allowed: {self.allowed()}")
            return
        if self.choices:
            if value not in self.choices:
                self._fail(value, f"must be one of {', '.join(self.choices)}")
            return
        accepts, what = _KINDS[self.kind]
        if self.kind == "bool":
            if not accepts(value):
                self._fail(value, f"must be {what}")
            return
        if not accepts(value):
            self._fail(value, f"must be {what} in {self.span()}")
        if isinstance(value, float) and not math.isfinite(value):
            self._fail(value, f"must be a finite number in {self.span()}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            self._fail(value, f"must be in {self.span()}")

    def _fail(self, value: Any, allowed: str) -> NoReturn:
        raise ConfigError(self.name, value, allowed)


@cache
def _rules() -> dict[str, _Rule]:
    return {f.name: _Rule.of(f) for f in fields(AtlasConfig)}


PRESETS: dict[str, AtlasConfig] = {
    # The first seed's numbers: linear decay 0.05/h, x1.2 reinforcement capped at 3,
    # floor 0.1, eviction below 0.15, orphans below 0.5, similar_to above 0.7.
    "seed-linear": AtlasConfig(
        decay_strategy="linear",
        decay_rate=0.05,
        reinforce_factor=1.2,
        weight_cap=3.0,
        weight_floor=0.1,
        evict_threshold=0.15,
        orphan_threshold=0.5,
        link_threshold=0.7,
        frequency_gain=0.0,
        recency_gain=0.0,
        association_gain=0.0,
        base_weight_min=1.0,
        base_weight_max=1.0,
        working_memory_size=0,
        session_end_mode="keep",
    ),
    "exponential": AtlasConfig(decay_strategy="exponential", decay_rate=0.05),
    "ebbinghaus": AtlasConfig(decay_strategy="ebbinghaus", stability_hours=24.0),
    "power-law": AtlasConfig(decay_strategy="power", decay_rate=0.5),
    # The defaults, tuned with the harness (docs/harness.md, "Measured results").
    "tuned": AtlasConfig(),
}
PRESET_DESCRIPTIONS: dict[str, str] = {
    "seed-linear": "The first seed as written (linear decay, every memory weighs the same): "
    "a baseline to compare with, not for real traffic.",
    "exponential": "Exponential decay, half-life about 14 h: a short-lived helper whose "
    "memory should empty within days unless it is used.",
    "ebbinghaus": "Forgetting curve whose stability grows with every recall: tutors and "
    "companions, where what comes up again should last.",
    "power-law": "Steep power-law decay (exponent 0.5): fast chat where yesterday's turns "
    "matter little.",
    "tuned": "The defaults: an assistant that chats and also sees tool output, logs and "
    "status lines (relevance first; templated lines fold into one summary); keeps a year, "
    "forgets under a memory budget.",
}
"""What traffic each preset suits, in one line (``atlas config``, the tuning page)."""


def preset(name: str) -> AtlasConfig:
    """A named preset; the error lists the names that exist."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError("preset", name, f"must be one of {', '.join(PRESETS)}") from None
