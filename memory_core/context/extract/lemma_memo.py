"""The pipeline's rule lemmatizer with a memory of every lemma it found.

spaCy's English rule lemmatizer keeps a cache keyed by a token's form, part of speech and
morphology, but fills it only at the end of its rules: a word it recognises early as a
base form (a singular noun, an infinitive, a positive adjective: most words of a chat turn)
or a part of speech without rules (pronouns, punctuation) is worked out again every time,
reading its morphology as a dict. The answer depends on nothing but that key (the form,
part of speech and morphology, and the lemma tables, which do not change), so here every
answer is kept under it: the same lemmas, about half of the lemmatizer's CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Token

KEPT = 200_000
"""Lemmas kept before the memory starts afresh (a form, part of speech and morphology each;
a chat's vocabulary needs a few thousand)."""


class LemmaMemo:
    """``rule(token)``, remembered by the token's form, part of speech and morphology."""

    __slots__ = ("_kept", "_rule", "_size")

    def __init__(self, rule: Callable[[Token], list[str]], size: int = KEPT) -> None:
        self._rule = rule
        self._size = size
        self._kept: dict[tuple[int, int, int], list[str]] = {}

    def __call__(self, token: Token) -> list[str]:
        key = (token.orth, token.pos, token.morph.key)  # type: ignore[attr-defined]  # as spaCy reads it
        found = self._kept.get(key)
        if found is None:
            found = self._rule(token)
            if token.pos:  # no part of speech: spaCy warns every time, so it is asked again
                if len(self._kept) >= self._size:
                    self._kept.clear()
                self._kept[key] = found
        return found


def use_lemma_memo(nlp: Language) -> bool:
    """Wrap ``nlp``'s rule lemmatizer in a ``LemmaMemo`` (True), or leave a lemmatizer of
    another mode, or none, as it is (False)."""
    if "lemmatizer" not in nlp.pipe_names:
        return False
    lemmatizer: Any = nlp.get_pipe("lemmatizer")
    if lemmatizer.mode != "rule":
        return False
    lemmatizer.lemmatize = LemmaMemo(lemmatizer.rule_lemmatize)
    return True
