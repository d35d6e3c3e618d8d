"""The sentences of a memory text, as spaCy's rule-based sentencizer cuts them.

A chatty turn ("Hey Mel! Lost my job at the bank last week. Gonna look into mental health
work.") says several things; the judges read one statement well and a turn badly
(``long_texts.py``). spaCy is a dependency already (the task context graph parses with it);
a blank English pipeline with its ``sentencizer`` needs no weights, and its tokenizer keeps
"Dr.", "e.g." and "3.5" whole, which a split at every full stop does not.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

MAX_CHARS = 2_000
"""Longest part of a text that is cut into sentences; the rest of a longer text is not."""
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a text, stripped, with where it stands in the text."""

    start: int
    end: int
    text: str


@functools.cache
def _splitter() -> Language:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@functools.lru_cache(maxsize=8192)
def sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of ``text`` in order (cached: a stored memory is read many times).
    A text of one sentence, or of none (blank), gives itself stripped or nothing."""
    with _lock:  # one pipeline for the process; its tokenizer's cache is not thread-safe
        doc = _splitter()(text[:MAX_CHARS])
        spans = [(s.start_char, s.end_char) for s in doc.sents]
    found = []
    for start, end in spans:
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            offset = start + len(piece) - len(piece.lstrip())
            found.append(Sentence(offset, offset + len(stripped), stripped))
    return tuple(found)
