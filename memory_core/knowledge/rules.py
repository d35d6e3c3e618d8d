"""Logic rules of the ingestion gate: typed callables in a registry, chosen by name.

A rule looks at the draft and at the newest stored version of the same key (or ``None``)
and returns human-readable problems as ``(field, message)`` pairs; no problems = pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from memory_core.errors import ConfigError, InputError
from memory_core.knowledge.items import ItemDraft, KnowledgeItem, parse_version

Problem = tuple[str, str]
Rule = Callable[[ItemDraft, KnowledgeItem | None], Sequence[Problem]]


def non_empty_content(draft: ItemDraft, previous: KnowledgeItem | None) -> list[Problem]:
    """Blank knowledge answers nothing and would match every query a little."""
    problems = []
    if not draft.content.strip():
        problems.append(("content", "must not be empty"))
    if not draft.key.strip():
        problems.append(("key", "must not be empty"))
    if not draft.source_name.strip():
        problems.append(("source_name", "must not be empty"))
    return problems


def confidence_in_range(draft: ItemDraft, previous: KnowledgeItem | None) -> list[Problem]:
    """Confidence multiplies the retrieval score, so it must be a probability."""
    c = draft.confidence
    if not (isinstance(c, int | float) and math.isfinite(c) and 0.0 <= c <= 1.0):
        return [("confidence", f"must be a number in [0, 1], got {c!r}")]
    return []


def effective_before_expiry(draft: ItemDraft, previous: KnowledgeItem | None) -> list[Problem]:
    """An empty validity window would make the item unretrievable forever."""
    if draft.expires_at is not None and draft.expires_at <= draft.effective_from:
        return [
            (
                "expires_at",
                f"must be after effective_from ({draft.effective_from.isoformat()}), "
                f"got {draft.expires_at.isoformat()}",
            )
        ]
    return []


def version_increases(draft: ItemDraft, previous: KnowledgeItem | None) -> list[Problem]:
    """Versions are the audit trail; going backwards would hide which text was in force."""
    try:
        new = parse_version(draft.version)
    except InputError as exc:
        return [("version", exc.problem)]
    if previous is not None and new <= parse_version(previous.version):
        return [
            (
                "version",
                f"must be greater than the newest stored version {previous.version!r} "
                f"of {draft.key!r}, got {draft.version!r}",
            )
        ]
    return []


DEFAULT_RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "non_empty_content": non_empty_content,
        "confidence_in_range": confidence_in_range,
        "effective_before_expiry": effective_before_expiry,
        "version_increases": version_increases,
    }
)


class RuleRegistry:
    """Named rules; start from the defaults and add domain rules (e.g. leave days <= tenure * 5)."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Mapping[str, Rule] = DEFAULT_RULES) -> None:
        self._rules: dict[str, Rule] = dict(rules)

    def register(self, name: str, rule: Rule) -> None:
        """Add a rule; a name can be used once so that a typo cannot replace a default."""
        if name in self._rules:
            raise ConfigError("rules", name, f"a rule named {name!r} is already registered")
        if not callable(rule):
            raise ConfigError("rules", rule, "a rule must be callable(draft, previous)")
        self._rules[name] = rule

    def names(self) -> list[str]:
        return list(self._rules)

    def check(
        self, draft: ItemDraft, previous: KnowledgeItem | None, *, skip: Sequence[str] = ()
    ) -> list[Problem]:
        """Run every rule (except ``skip``); all problems, not just the first."""
        problems: list[Problem] = []
        for name, rule in self._rules.items():
            if name not in skip:
                problems.extend(rule(draft, previous))
        return problems
