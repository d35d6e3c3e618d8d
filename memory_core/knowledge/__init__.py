"""Long-term verified knowledge and mid-term episodes (the second seed's upper two tiers).

``KnowledgeBase`` is the entry point: ``with kb.unit() as unit:`` gives the item
repository (gate, review actions), the feedback loop, the episode store and the audit
queries of one transaction; ``kb.tier().lookup(...)`` is the atlas's fallback tier.
"""

from memory_core.knowledge.audit import AuditQueries, ItemDetail, VersionConflict, VersionStep
from memory_core.knowledge.episodes import Episode, EpisodeStatus, EpisodeStore, SweepReport
from memory_core.knowledge.feedback import FeedbackLoop
from memory_core.knowledge.gate import GateProblem, GateResult, IngestionGate, version_diff
from memory_core.knowledge.importer import (
    ImportReport,
    RowError,
    csv_columns,
    import_file,
    import_records,
)
from memory_core.knowledge.items import (
    AuditEntry,
    Checklist,
    Citation,
    CitedBy,
    ItemDraft,
    ItemStatus,
    KnowledgeItem,
    ReviewAction,
    SourceKind,
)
from memory_core.knowledge.repository import KnowledgeRepository, Submission
from memory_core.knowledge.retrieval import KnowledgeFilter, KnowledgeHit, KnowledgeTier
from memory_core.knowledge.rules import DEFAULT_RULES, Rule, RuleRegistry
from memory_core.knowledge.sample import load_sample_knowledge
from memory_core.knowledge.service import KnowledgeBase, KnowledgeUnit
from memory_core.knowledge.settings import KnowledgeSettings

__all__ = [
    "DEFAULT_RULES",
    "AuditEntry",
    "AuditQueries",
    "Checklist",
    "Citation",
    "CitedBy",
    "Episode",
    "EpisodeStatus",
    "EpisodeStore",
    "FeedbackLoop",
    "GateProblem",
    "GateResult",
    "ImportReport",
    "IngestionGate",
    "ItemDetail",
    "ItemDraft",
    "ItemStatus",
    "KnowledgeBase",
    "KnowledgeFilter",
    "KnowledgeHit",
    "KnowledgeItem",
    "KnowledgeRepository",
    "KnowledgeSettings",
    "KnowledgeTier",
    "KnowledgeUnit",
    "ReviewAction",
    "RowError",
    "Rule",
    "RuleRegistry",
    "SourceKind",
    "Submission",
    "SweepReport",
    "VersionConflict",
    "VersionStep",
    "csv_columns",
    "import_file",
    "import_records",
    "load_sample_knowledge",
    "version_diff",
]
