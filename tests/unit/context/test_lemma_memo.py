"""``LemmaMemo``: the rule lemmatizer asked once per form, part of speech and morphology;
a token without a part of speech asked every time (spaCy warns for each); bounded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_core.context.extract.lemma_memo import LemmaMemo


@dataclass(frozen=True)
class _Morph:
    key: int


@dataclass(frozen=True)
class _Token:
    orth: int
    pos: int
    morph: _Morph


def _token(orth: int, pos: int, key: int) -> Any:
    """What the memory reads of a spaCy token."""
    return _Token(orth, pos, _Morph(key))


class _Rule:
    def __init__(self) -> None:
        self.asked: list[Any] = []

    def __call__(self, token: Any) -> list[str]:
        self.asked.append(token)
        return [f"lemma-{token.orth}-{token.pos}-{token.morph.key}"]


def test_each_key_is_asked_once_and_answers_as_the_rule() -> None:
    rule = _Rule()
    memo = LemmaMemo(rule)
    tokens = [_token(1, 92, 7), _token(1, 92, 8), _token(1, 100, 7)]
    first = [memo(t) for t in tokens]
    again = [memo(_token(t.orth, t.pos, t.morph.key)) for t in tokens]
    assert first == again == [_Rule()(t) for t in tokens]
    assert len(rule.asked) == 3


def test_no_part_of_speech_is_asked_every_time() -> None:
    rule = _Rule()
    memo = LemmaMemo(rule)
    for _ in range(3):
        memo(_token(5, 0, 0))
    assert len(rule.asked) == 3


def test_full_memory_starts_afresh() -> None:
    rule = _Rule()
    memo = LemmaMemo(rule, size=2)
    for orth in (1, 2, 3, 1):
        memo(_token(orth, 92, 0))
    assert [t.orth for t in rule.asked] == [1, 2, 3, 1]  # 1 and 2 let go when 3 came
