"""Memory policies the replay drives: the engine itself and the baselines it must beat.

Every policy sits behind one small ``MemoryPolicy`` protocol so that the replay loop,
the metrics and the explanations never care which one runs. The baselines retrieve by
plain cosine similarity over the precomputed vectors and differ only in what they forget:

- ``unlimited``: forgets nothing (the upper bound on retention);
- ``fifo``: at capacity, forgets the oldest memory;
- ``lru``: at capacity, forgets the memory least recently added or retrieved;
- ``random``: at capacity, forgets a uniformly random memory (seeded by ``config.seed``);
- ``seed-linear``: the first seed's ``ElasticMemoryAtlas`` as written (see ``SeedLinearPolicy``).

``atlas`` wraps ``ElasticMemoryAtlas`` with the run's configuration.
"""

from memory_core.embedding.base import Embedder
from memory_core.engine.clock import Clock
from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError
from memory_core.harness.policies.atlas import AtlasPolicy
from memory_core.harness.policies.base import Held, Hit, Lifecycle, MemoryPolicy, PolicyFactory
from memory_core.harness.policies.baselines import (
    FifoPolicy,
    HybridPolicy,
    LruPolicy,
    RandomPolicy,
    UnlimitedPolicy,
)
from memory_core.harness.policies.seed import SeedLinearPolicy

POLICIES: dict[str, PolicyFactory] = {
    "atlas": AtlasPolicy,
    "fifo": FifoPolicy,
    "lru": LruPolicy,
    "random": RandomPolicy,
    "unlimited": UnlimitedPolicy,
    "seed-linear": SeedLinearPolicy,
    "hybrid": HybridPolicy,
}
BASELINES: tuple[str, ...] = ("fifo", "lru", "random", "unlimited", "seed-linear", "hybrid")


def make_policy(name: str, config: AtlasConfig, embedder: Embedder, clock: Clock) -> MemoryPolicy:
    """Build a policy by name; the error lists the names that exist."""
    factory = POLICIES.get(name)
    if factory is None:
        raise InputError("policy", f"must be one of {', '.join(POLICIES)}, got {name!r}")
    return factory(config, embedder, clock)


__all__ = [
    "BASELINES",
    "POLICIES",
    "AtlasPolicy",
    "FifoPolicy",
    "Held",
    "Hit",
    "HybridPolicy",
    "Lifecycle",
    "LruPolicy",
    "MemoryPolicy",
    "PolicyFactory",
    "RandomPolicy",
    "SeedLinearPolicy",
    "UnlimitedPolicy",
    "make_policy",
]
