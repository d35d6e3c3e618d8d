"""The pipeline's attribute ruler matched by a lookup instead of spaCy's ``Matcher``: the
same matches at a fraction of the CPU.

``en_core_web_sm``'s ``attribute_ruler`` maps each token's tag to its part of speech and
morphology and fixes lemmas and parts of speech with ~180 one- and two-token rules on the
token's lowercase form, tag, dependency label and whether it is a space. spaCy runs them
through a general ``Matcher`` that walks every rule over every token and then makes a
``Span`` per match to write it: 0.6-0.8 ms of a turn's parse, about 15 % of it. Here each
rule is indexed by the lowercase form or tag it requires, a token's one-token rules are
remembered by what they read of it (the same words recur), and each match is written
straight to its token with spaCy's own ``set_token_attrs``, in the ruler's order (a later
rule wins). ``RuleIndex.match`` returns exactly the list ``AttributeRuler.match`` would; a
rule this module cannot read (another key or operator than the shipped model's) leaves the
ruler as spaCy built it (``use_rule_index``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

Reading = tuple[str, str, str, bool]
"""What the rules read of a token: its lowercase form, tag, dependency label, is-space."""
Check = Callable[[Reading], bool]
_Rest = tuple[int, tuple[tuple[int, Check], ...], int]
"""A rule longer than one token whose first token matched: its number, the checks of its
other tokens by offset, its length."""

_FIELDS = {"LOWER": 0, "TAG": 1, "DEP": 2, "IS_SPACE": 3}


class UnsupportedRule(ValueError):
    """A rule uses a token attribute or operator that ``RuleIndex`` does not implement."""


class RuleIndex:
    """The attribute ruler's rules, indexed by the lowercase form or tag each requires."""

    __slots__ = ("_attrs", "_indices", "_keys", "_multi", "_single", "rules_for")

    def __init__(
        self,
        rules: Sequence[Sequence[Sequence[dict[str, Any]]]],
        keys: Sequence[int],
        attrs: Sequence[dict[int, Any]],
        indices: Sequence[int],
    ) -> None:
        """Rule ``i``: ``rules[i]``, its alternative patterns (lists of token specs, as the
        ruler's ``patterns`` gives them); ``keys[i]``, its match id (the hash of ``str(i)``);
        ``attrs[i]``, what it writes (normalised, as the ruler holds it); ``indices[i]``,
        which token of a match it writes to."""
        self._keys = list(keys)
        self._attrs = list(attrs)
        self._indices = list(indices)
        self._single = _Table()
        self._multi = _Table()
        for number, patterns in enumerate(rules):
            for pattern in patterns:
                if not -len(pattern) <= indices[number] < len(pattern):
                    raise UnsupportedRule(f"index {indices[number]} of a {len(pattern)}-token rule")
                table = self._single if len(pattern) == 1 else self._multi
                table.add(number, [_token_check(spec) for spec in pattern], pattern[0])
        # what a token's reading decides (its one-token rules, the longer rules its token
        # may start) depends only on the reading, and readings repeat
        self.rules_for = functools.lru_cache(maxsize=READINGS_KEPT)(self._rules_for)

    def _rules_for(self, reading: Reading) -> tuple[tuple[int, ...], tuple[_Rest, ...]]:
        """The one-token rules ``reading`` matches, and the longer rules whose first token it
        matches with the checks of their other tokens."""
        single = tuple(n for n, (check,) in self._single.candidates(reading) if check(reading))
        multi = tuple(
            (n, tuple(enumerate(checks))[1:], len(checks))
            for n, checks in self._multi.candidates(reading)
            if checks[0](reading)
        )
        return single, multi

    def match(self, doc: Doc) -> list[tuple[int, int, int, int]]:
        """``(rule, match id, start, end)`` of every match, sorted: ``AttributeRuler.match``'s
        result for ``doc``."""
        readings = [(t.lower_, t.tag_, t.dep_, t.is_space) for t in doc]
        keys = self._keys
        found = []
        for start, reading in enumerate(readings):
            single, multi = self.rules_for(reading)
            found += [(n, keys[n], start, start + 1) for n in single]
            for number, rest, length in multi:
                end = start + length
                if end <= len(readings) and all(
                    check(readings[start + offset]) for offset, check in rest
                ):
                    found.append((number, keys[number], start, end))
        found.sort()
        return found

    def set_annotations(self, doc: Doc, matches: Iterable[tuple[int, int, int, int]]) -> None:
        """``AttributeRuler.set_annotations`` without a ``Span`` per match: each match's
        attributes written to its token, in the order given (a later rule wins)."""
        from spacy.tokens._retokenize import set_token_attrs

        for number, _, start, end in matches:
            index = self._indices[number]
            set_token_attrs(doc[start + index if index >= 0 else end + index], self._attrs[number])


READINGS_KEPT = 1 << 14
"""Distinct token readings whose one-token rules are remembered (the four LoCoMo dev
conversations, 2,080 turns, have 8,049; a full memory holds a few MB)."""


class _Table:
    """Patterns indexed by the lowercase form, else the tag, their first token requires."""

    __slots__ = ("_any", "_by_lower", "_by_tag")

    def __init__(self) -> None:
        self._by_lower: dict[str, list[tuple[int, list[Check]]]] = {}
        self._by_tag: dict[str, list[tuple[int, list[Check]]]] = {}
        self._any: list[tuple[int, list[Check]]] = []

    def add(self, number: int, checks: list[Check], first: dict[str, Any]) -> None:
        entry = (number, checks)
        for field, table in (("LOWER", self._by_lower), ("TAG", self._by_tag)):
            values = _required_values(first.get(field))
            if values:
                for value in values:
                    table.setdefault(value, []).append(entry)
                return
        self._any.append(entry)

    def candidates(self, reading: Reading) -> list[tuple[int, list[Check]]]:
        """The patterns whose first token may match ``reading``."""
        return [
            *self._by_lower.get(reading[0], ()),
            *self._by_tag.get(reading[1], ()),
            *self._any,
        ]


def use_rule_index(nlp: Language) -> bool:
    """Match and apply ``nlp``'s attribute ruler through a ``RuleIndex`` (True), or leave
    it as spaCy built it when there is none or a rule the index cannot read (False). The
    index is built from the rules the ruler holds now: call it after any ``add_patterns``."""
    if "attribute_ruler" not in nlp.pipe_names:
        return False
    ruler: Any = nlp.get_pipe("attribute_ruler")
    rules = [rule["patterns"] for rule in ruler.patterns]
    keys = [nlp.vocab.strings[str(number)] for number in range(len(rules))]
    try:
        index = RuleIndex(rules, keys, ruler.attrs, ruler.indices)
    except UnsupportedRule:
        return False
    ruler.match = index.match
    ruler.set_annotations = index.set_annotations
    return True


def _required_values(value: Any) -> Iterable[str] | None:
    """The values a spec's field must take (exact or ``IN``), else None."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, dict) and set(value) == {"IN"}:
        return tuple(value["IN"])
    return None


def _token_check(spec: dict[str, Any]) -> Check:
    """One token spec as a test of a ``Reading``: every field's condition holds."""
    tests = [_field_check(name, value) for name, value in spec.items()]
    return lambda reading: all(test(reading) for test in tests)


def _field_check(name: str, value: Any) -> Check:
    field = _FIELDS.get(name.upper())
    if field is None:
        raise UnsupportedRule(f"token attribute {name!r}")
    if isinstance(value, str | bool):
        return lambda reading: reading[field] == value
    if isinstance(value, dict) and len(value) == 1:
        ((operator, operand),) = value.items()
        if operator == "IN":
            allowed = frozenset(operand)
            return lambda reading: reading[field] in allowed
        if operator == "NOT_IN":
            refused = frozenset(operand)
            return lambda reading: reading[field] not in refused
        if operator == "REGEX":
            pattern = re.compile(operand)
            return lambda reading: bool(pattern.search(str(reading[field])))
    raise UnsupportedRule(f"condition {value!r} on {name!r}")
