"""One turn in, its facts out: intent, goal, slot values and entities.

``Extractor`` holds what extraction needs: the parser (loaded once per process, see
``parse``) and the embedder-backed classifiers (intent, goal, attribute names). The turn's
own vector comes from the caller when it has one (the agent loop embeds the utterance
anyway), so a turn costs one parse and one embedding call for its candidate phrases;
``extract_many`` runs a replay through ``nlp.pipe`` and embeds all its phrases in one call.
A live turn's phrases are read from the parse's syntax alone, so they are embedded while
the parser's entity recognizer runs on the engine's helper thread (``parse.parse_overlapped``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from memory_core.context.extract import labels
from memory_core.context.extract.parse import (
    MAX_PARSE_CHARS,
    clip,
    parse,
    parse_many,
    parse_overlapped,
)
from memory_core.context.extract.parse import warm as warm_parser
from memory_core.context.extract.patterns import IDENTIFIER, Value, find_values
from memory_core.context.extract.slots import (
    FIRST_PERSON,
    USER,
    SlotValue,
    choice_candidates,
    slot_values,
)
from memory_core.embedding.base import Embedder, embed_checked
from memory_core.embedding.phrase_twin import phrase_memory, word_memory
from memory_core.embedding.prototypes import Nearest, PrototypeClassifier, nearest_of
from memory_core.errors import InputError

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

PHRASE_MEMORY = 20_000
"""Candidate phrases the extractor keeps the vectors of: a replay embeds all its phrases
in one call and the classifiers then find them; a live agent embeds a phrasing it has met
before ("make it", "Thanks", "keep up") once."""
PEOPLE_MEMORY = 2_000
"""Nouns the people classifier keeps the vectors of (a chat names a few dozen)."""
MAX_SCAN_CHARS = 8_000
"""Longest part of a turn the regular expressions read (the parser reads less)."""
INTENT_MIN_SIMILARITY = 0.35
FORGET_MIN_SIMILARITY = 0.55
"""A whole turn is a request to forget only this close (the agent's own default threshold,
``AtlasConfig.forget_intent_similarity``): a wrong one removes what the user said."""
COMMAND_MIN_SIMILARITY = 0.75
"""An imperative clause at least this close to a forget or cancel example decides the turn."""
MAX_COMMANDS = 3
"""Below this similarity to every intent example a turn is a plain statement."""
GOAL_MIN_SIMILARITY = 0.4
"""A turn opens or names a goal when its nearest task example is at least this close."""
ENTITY_LABELS = frozenset({"PRODUCT", "ORG", "GPE", "LOC", "FAC", "PERSON", "EVENT", "WORK_OF_ART"})
TRANSACTIONS = {
    "order": "order", "buy": "purchase", "purchase": "purchase", "book": "booking",
    "reserve": "reservation", "rent": "rental", "ship": "shipment", "return": "return",
}  # fmt: skip
"""Verbs whose past use implies a thing with an identity (an order, a booking)."""


@dataclass(frozen=True, slots=True)
class EntityMention:
    """A thing a turn names: a product, a place, an order (``kind``), with attributes
    (an order's ``order_id``) and, for a transaction, the things it is about."""

    label: str
    kind: str
    attributes: tuple[tuple[str, str], ...] = ()
    about: tuple[str, ...] = ()
    """Labels of the entities this one references (an order -> the product ordered)."""


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """Everything extraction found in one turn."""

    text: str
    speaker: str
    at: float | None
    intent: str
    intent_similarity: float
    goal: str | None
    goal_similarity: float
    slots: tuple[SlotValue, ...] = ()
    entities: tuple[EntityMention, ...] = ()
    forget_topic: str | None = None
    """What a "forget what I said about X" names (None: the last turn)."""
    cancel_topic: str | None = None
    """What a cancellation names ("take the sports add-on off"; None: the current goal)."""
    goal_scores: tuple[tuple[str, float], ...] = ()
    """Similarity of the turn to every task label (to keep a goal rather than switch)."""
    parsed_chars: int = field(default=0)
    small_talk: bool = False
    """Nearer a small-talk example (thanks, greetings, how-was-your-day) than to every
    intent's: what it says goes into the graph as usual, but none of its unsure changes
    goes to a reviewer (``review_gate``)."""


class Extractor:
    """Turns into facts. Thread-safe; the parser and the example vectors load on first use.

    Args:
        embedder: for intent, goal and attribute names (MiniLM in production, the hashing
            fake in unit tests). Candidate phrases and the attribute and command examples
            they are named by go through its phrase twin when it is MiniLM
            (``embedding.phrase_twin.phrase_memory``: onnxruntime for a live turn's few
            phrases, bfloat16 for larger calls; decisions as float32's but for phrases
            at a threshold, docs/context.md).
        parser: ``text -> Doc`` (default: the shared English pipeline, its entities
            recognised while the phrases are embedded; a given parser runs first, whole).
    """

    __slots__ = (
        "_commands",
        "_goals",
        "_intents",
        "_namer",
        "_parse",
        "_parse_many",
        "_people",
        "_phrase_vectors",
        "embedder",
    )

    def __init__(
        self,
        embedder: Embedder,
        *,
        parser: Callable[[str], Doc] | None = None,
    ) -> None:
        self.embedder = embedder
        self._intents = PrototypeClassifier(embedder, labels.INTENT_EXAMPLES)
        self._goals = PrototypeClassifier(embedder, labels.GOAL_EXAMPLES)
        # phrases and the examples they are named by: MiniLM's cheaper runners when it can
        self._phrase_vectors = phrase_memory(embedder, PHRASE_MEMORY)
        self._namer = PrototypeClassifier(self._phrase_vectors, labels.SLOT_EXAMPLES)
        self._commands = PrototypeClassifier(self._phrase_vectors, labels.COMMAND_EXAMPLES)
        # single nouns: float32 vectors at onnxruntime's fixed cost when it is MiniLM
        self._people = PrototypeClassifier(
            word_memory(embedder, PEOPLE_MEMORY), labels.PEOPLE_EXAMPLES
        )
        self._parse = _RecentParses(
            parser or parse, parse_overlapped if parser is None else _then(parser)
        )
        self._parse_many = parse_many if parser is None else lambda ts: (parser(t) for t in ts)

    def warm_classifiers(self) -> None:
        """Embed every classifier's examples now, off the hot path (else the first turn
        does it), and the attribute names a free choice can get: the graph compares them
        as slot names, through the same process-wide phrase memory when it is MiniLM's."""
        for classifier in (self._intents, self._goals, self._namer, self._commands, self._people):
            classifier.vectors()
        self._phrase_vectors.prime(list(labels.SLOT_EXAMPLES))

    def slots(self, text: str, *, speaker: str = USER, at: float | None = None) -> list[SlotValue]:
        """The slot values of one text (no intent or goal: one parse, at most one embedding)."""
        scanned = text[:MAX_SCAN_CHARS]
        doc = self._parse(clip(scanned)) if scanned.strip() else None
        return slot_values(
            scanned,
            find_values(scanned, at),
            doc,
            speaker=speaker,
            namer=self._namer,
            people=self._people,
        )

    def mentions(self, text: str, *, at: float | None = None) -> list[EntityMention]:
        """The entities a text names (a question's, for the agent's entity route): one
        parse, no embedding; typed values are read only to keep them out of the names."""
        scanned = text[:MAX_SCAN_CHARS]
        if not scanned.strip():
            return []
        doc = self._parse(clip(scanned))
        return entities(doc, slot_values(scanned, find_values(scanned, at), doc))

    def extract(
        self,
        text: str,
        *,
        speaker: str = USER,
        at: float | None = None,
        vector: np.ndarray | None = None,
        reply_to: str | None = None,
    ) -> TurnFacts:
        """One live turn (``vector``: the text's unit embedding, as the agent loop computed
        it for its rules; ``reply_to``: the other side's turn before, which names a choice
        said without a verb, usually parsed already as the turn before)."""
        scanned = text[:MAX_SCAN_CHARS]
        if not scanned.strip():
            return _empty(text, speaker, at)
        before = self._parse(clip(reply_to[:MAX_SCAN_CHARS])) if reply_to else None
        if vector is None or len(text) > MAX_PARSE_CHARS:
            vector = embed_checked(self.embedder, [clip(scanned)])[0]
        else:
            vector = self._checked(vector, 1)[0]
        values = find_values(scanned, at)
        found: list[_Phrases] = []

        def embed_phrases(syntax: Doc) -> None:  # while the entities are recognised
            found.append(_Phrases.of(syntax, values, before))
            self._phrase_vectors.prime(found[0].texts())  # one call for its phrases

        doc = self._parse.overlapped(clip(scanned), embed_phrases)
        return self._facts(text, scanned, doc, vector, speaker, at, values, before, found[0])

    def extract_many(
        self,
        turns: Sequence[tuple[str, str, float | None]],
        vectors: np.ndarray | None = None,
    ) -> list[TurnFacts]:
        """Many ``(text, speaker, at)`` turns: batched parse and one embedding call for
        all their phrases (``vectors``: the texts' unit embeddings, one row per turn, when
        the caller has them; else they are embedded here in one more call)."""
        scanned = [t[:MAX_SCAN_CHARS] for t, _, _ in turns]
        live = [i for i, s in enumerate(scanned) if s.strip()]
        docs = list(self._parse_many([clip(scanned[i]) for i in live]))
        given = {} if vectors is None else dict(enumerate(self._checked(vectors, len(turns))))
        # a text longer than the parser reads is embedded by its clip, as ``extract`` does
        embed = [i for i in live if i not in given or len(turns[i][0]) > MAX_PARSE_CHARS]
        if embed:
            clips = [clip(scanned[i]) for i in embed]
            given.update(zip(embed, embed_checked(self.embedder, clips), strict=True))
        values = {i: find_values(scanned[i], turns[i][2]) for i in live}
        # the other side's turn just before, when it was parsed: what a verbless choice answers
        before = [
            docs[row - 1] if row and live[row - 1] == i - 1 and turns[i - 1][1] != turns[i][1]
            else None
            for row, i in enumerate(live)
        ]  # fmt: skip
        phrases = [_Phrases.of(docs[row], values[i], before[row]) for row, i in enumerate(live)]
        self._phrase_vectors.prime([text for found in phrases for text in found.texts()])
        out = [_empty(t, sp, at) for t, sp, at in turns]
        for row, i in enumerate(live):
            text, speaker, at = turns[i]
            out[i] = self._facts(
                text, scanned[i], docs[row], given[i], speaker, at, values[i], before[row],
                phrases[row],
            )  # fmt: skip
        return out

    def _checked(self, vectors: np.ndarray, rows: int) -> np.ndarray:
        """A caller's turn vectors as given (already unit length: not normalised again, so
        a live turn and its replay see the same numbers), or a clear error."""
        dim = self.embedder.dim
        array = np.asarray(vectors, dtype=np.float32)
        if rows == 1 and array.shape == (dim,):
            array = array[None, :]
        if array.shape != (rows, dim):
            raise InputError(
                "vector", f"expected {rows} row(s) of {dim} numbers, got shape {array.shape}"
            )
        if not np.isfinite(array).all():
            raise InputError("vector", "contains NaN or infinity")
        return array

    def _facts(
        self,
        text: str,
        scanned: str,
        doc: Doc,
        vector: np.ndarray,
        speaker: str,
        at: float | None,
        values: Sequence[Value],
        reply_to: Doc | None,
        phrases: _Phrases,
    ) -> TurnFacts:
        intents = self._intents.best_per_label(vector)
        chat = intents.pop(labels.SMALL_TALK)  # read apart: small talk is not an intent
        intent = nearest_of(intents)
        small_talk = chat > intent.similarity
        forget_unsure = intent.label == labels.FORGET and intent.similarity < FORGET_MIN_SIMILARITY
        if intent.similarity < INTENT_MIN_SIMILARITY or forget_unsure:
            intent = Nearest(labels.STATE, intent.similarity, None, -1.0)
        commanded, command_verb = self._command(phrases.commands)
        strong = (labels.FORGET, labels.CANCEL)
        if commanded is not None and commanded.label in strong:
            if intent.label not in strong or commanded.similarity > intent.similarity:
                intent = commanded
        elif commanded is not None and intent.label in strong and intent.similarity < 0.9:
            intent = Nearest(labels.STATE, intent.similarity, None, -1.0)  # "keep the hotel"
        scores = self._goals.best_per_label(vector)
        goal = nearest_of(scores)
        slots = slot_values(
            scanned,
            values,
            doc,
            speaker=speaker,
            namer=self._namer,
            people=self._people,
            reply_to=reply_to,
            candidates=phrases.choices,
        )
        return TurnFacts(
            text=text,
            speaker=speaker,
            at=at,
            intent=intent.label,
            intent_similarity=round(intent.similarity, 4),
            goal=goal.label if _is_goal(goal) else None,
            goal_similarity=round(goal.similarity, 4),
            slots=tuple(slots),
            entities=tuple(entities(doc, slots)),
            forget_topic=forget_topic(doc, command_verb) if intent.label == labels.FORGET else None,
            cancel_topic=forget_topic(doc, command_verb) if intent.label == labels.CANCEL else None,
            goal_scores=tuple((k, round(v, 4)) for k, v in scores.items()),
            parsed_chars=min(len(scanned), MAX_PARSE_CHARS),
            small_talk=small_talk,
        )

    def _command(self, clauses: Sequence[tuple[Token, str]]) -> tuple[Nearest | None, Token | None]:
        """An imperative clause inside a longer turn ("nvm forget the candle thing, she'll
        hate it"): its verb classified alone (forget, cancel or another action), so the
        rest of the turn does not dilute it; None when no verb is clearly one of them."""
        if not clauses:
            return None, None
        spans = [text for _, text in clauses]
        best: tuple[Nearest | None, Token | None] = (None, None)
        for (verb, _), near in zip(clauses, self._commands.nearest_many(spans), strict=True):
            if near.similarity >= COMMAND_MIN_SIMILARITY and (
                best[0] is None or near.similarity > best[0].similarity
            ):
                best = (near, verb)
        return best


def command_clauses(doc: Doc) -> list[tuple[Token, str]]:
    """Imperative verbs with an object ("forget the pool", "take the add-on off") and the
    text their action is classified by: the verb and its particle, without the object."""
    clauses = []
    for verb in doc:
        if verb.tag_ not in ("VB", "VBP"):  # checked first: a token's children are costly
            continue
        obj = next(
            (
                c
                for c in verb.children
                if c.dep_ == "dobj" or (c.dep_ == "prep" and c.lower_ == "about")
            ),
            None,
        )
        if obj is None or obj.i <= verb.i:
            continue
        told = any(
            c.dep_ == "aux" or (c.dep_ == "nsubj" and c.pos_ == "PRON") for c in verb.children
        )
        if not told:
            particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
            clauses.append((verb, f"{verb.lemma_.lower()} {particle}".strip()))
    return clauses[:MAX_COMMANDS]


Overlapped = Callable[[str, Callable[["Doc"], None]], "Doc"]
"""``(text, meanwhile) -> Doc``: a parse that runs ``meanwhile`` on the doc's syntax."""


class _RecentParses:
    """The parser with a memory of its last few texts: a live turn's ``reply_to`` (the turn
    parsed just before) and a question parsed for the entity route are not parsed again."""

    __slots__ = ("_docs", "_lock", "_overlapped", "_parse")

    SIZE = 8

    def __init__(self, parse: Callable[[str], Doc], overlapped: Overlapped) -> None:
        self._parse = parse
        self._overlapped = overlapped
        self._docs: OrderedDict[str, Doc] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> Doc:
        doc = self._recent(text)
        return doc if doc is not None else self._keep(text, self._parse(text))

    def overlapped(self, text: str, meanwhile: Callable[[Doc], None]) -> Doc:
        """The doc of ``text``, ``meanwhile(doc)`` run on its syntax (``parse_overlapped``)."""
        doc = self._recent(text)
        if doc is not None:
            meanwhile(doc)
            return doc
        return self._keep(text, self._overlapped(text, meanwhile))

    def _recent(self, text: str) -> Doc | None:
        with self._lock:
            doc = self._docs.get(text)
            if doc is not None:
                self._docs.move_to_end(text)
            return doc

    def _keep(self, text: str, doc: Doc) -> Doc:
        with self._lock:
            self._docs[text] = doc
            if len(self._docs) > self.SIZE:
                self._docs.popitem(last=False)
        return doc


def _then(parser: Callable[[str], Doc]) -> Overlapped:
    """A given parser as an overlapped one: the whole parse first, then ``meanwhile``."""

    def overlapped(text: str, meanwhile: Callable[[Doc], None]) -> Doc:
        doc = parser(text)
        meanwhile(doc)
        return doc

    return overlapped


@dataclass(frozen=True, slots=True)
class _Phrases:
    """A turn's candidate phrases, found once: embedded ahead in one call (a replay's in
    one call for all its turns), then classified from the memory."""

    choices: list[tuple[Span, Token, str]]
    """Object phrases that may be free choices (``choice_candidates``)."""
    commands: list[tuple[Token, str]]
    """Imperative verbs (``command_clauses``)."""

    @classmethod
    def of(cls, doc: Doc, values: Sequence[Value], reply_to: Doc | None) -> _Phrases:
        taken = [(v.start, v.end) for v in values]
        return cls(choice_candidates(doc, taken, reply_to), command_clauses(doc))

    def texts(self) -> list[str]:
        return [text for _, _, text in self.choices] + [text for _, text in self.commands]


def _is_goal(goal: Nearest) -> bool:
    return goal.similarity >= GOAL_MIN_SIMILARITY


def _empty(text: str, speaker: str, at: float | None) -> TurnFacts:
    return TurnFacts(text, speaker, at, labels.STATE, 0.0, None, 0.0)


# -- entities --------------------------------------------------------------------------
def entities(doc: Doc, slots: Sequence[SlotValue]) -> list[EntityMention]:
    """Named entities, things the speaker owns ("my iPhone 15"), transactions ("I ordered",
    an order number) and which of them references which."""
    found: dict[str, EntityMention] = {}
    things: list[str] = []
    typed = [(v.start, v.end) for v in slots]
    for ent in doc.ents:
        overlaps = any(ent.start_char < e and s < ent.end_char for s, e in typed)
        if ent.label_ in ENTITY_LABELS and _has_word(ent.text) and not overlaps:
            label = _clean(ent.text)
            found.setdefault(label.lower(), EntityMention(label, ent.label_.lower()))
            if ent.label_ in ("PRODUCT", "WORK_OF_ART", "ORG"):
                things.append(label)
    for chunk in doc.noun_chunks:
        owned = any(t.dep_ == "poss" and t.lower_ in FIRST_PERSON for t in chunk)
        if not owned or not _thing_like(chunk):
            continue
        if chunk.root.head.lemma_ == "be" and chunk.root.dep_ in ("nsubj", "attr"):
            continue  # "my budget is 200", "what is my hotel limit": an attribute, not a thing
        label = _owned_label(chunk)
        if label and label.lower() not in found and label.lower() not in TRANSACTIONS.values():
            kind = "product" if chunk.root.pos_ == "PROPN" else chunk.root.lemma_.lower()
            found[label.lower()] = EntityMention(label, kind)
            things.append(label)
    transactions: dict[str, list[tuple[str, str]]] = {}
    for token in doc:
        done = TRANSACTIONS.get(token.lemma_.lower())
        if done is None:
            continue  # read first: a token's children are costly
        said = (token.pos_ == "VERB" and token.tag_ in ("VBD", "VBN")) or (
            token.pos_ == "NOUN" and any(c.lower_ in FIRST_PERSON for c in token.children)
        )
        if said:
            transactions.setdefault(done, [])
    for slot in slots:
        if slot.kind == IDENTIFIER:
            kind = (slot.slot.removesuffix(" id") or "reference").strip()
            kind = TRANSACTIONS.get(kind, kind)
            transactions.setdefault(kind, []).append((f"{kind}_id", slot.value))
    for kind, attributes in transactions.items():
        found.pop(kind, None)
        about = tuple(t for t in things if t.lower() != kind)
        found[kind] = EntityMention(kind, kind, tuple(attributes), about)
    return list(found.values())


def _thing_like(chunk: Span) -> bool:
    """An owned noun that names a particular thing ("my iPhone 15", "my Zara jacket"), not
    a body part or a time of day ("my head", "my afternoon"): a proper noun, or a noun
    with a name, number or compound of its own."""
    root = chunk.root
    if root.pos_ == "PROPN":
        return True
    return root.pos_ == "NOUN" and any(
        c.pos_ == "PROPN" or c.like_num or c.dep_ == "compound" for c in root.children
    )


def _owned_label(chunk: Span) -> str:
    """ "my iPhone 15" -> "iPhone 15" (the number the parser hangs off the head stays)."""
    words = [t for t in chunk if t.dep_ not in ("poss", "det") and t.pos_ != "PRON"]
    tail = [t for t in chunk.root.rights if t.like_num and t.i == chunk.end]
    return _clean(" ".join(t.text for t in [*words, *tail]))


def _has_word(text: str) -> bool:
    return any(c.isalnum() for c in text)


def _clean(text: str) -> str:
    return " ".join(text.split()).strip(" .,;:!?\"'")


def forget_topic(doc: Doc, verb: Token | None = None) -> str | None:
    """What a request to forget names: the object of "about" ("forget what I said about
    the hotel"), else the first verb's own object ("forget the pool", "scratch the
    candle"); None when it names nothing ("forget what I just said", "scratch that")."""
    objects = [
        c
        for token in doc
        if token.lower_ in ("about", "regarding") and token.dep_ == "prep"
        for c in token.children
        if c.dep_ == "pobj"
    ]
    if not objects and verb is None:
        verb = next((t for t in doc if t.pos_ == "VERB"), doc[0].sent.root if len(doc) else None)
    if not objects:
        objects = [c for c in verb.children if c.dep_ == "dobj"] if verb is not None else []
    for obj in objects[:1]:
        if obj.dep_ == "prep":  # "forget about the pool"
            obj = next((c for c in obj.children if c.dep_ == "pobj"), obj)
        words = [  # the object's own words, not a clause hanging off it
            t.lower_
            for t in obj.subtree
            if t.i <= obj.i
            and t.pos_ in ("NOUN", "PROPN", "ADJ", "NUM")
            and t.lower_ not in FIRST_PERSON
        ]
        if words:
            return " ".join(words)
    return None


_default: Extractor | None = None
_default_lock = threading.Lock()


def default_extractor() -> Extractor:
    """The process-wide extractor over the default (MiniLM) embedder."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                from memory_core.embedding.minilm import default_embedder

                _default = Extractor(default_embedder())
    return _default


def warm(embedder: Embedder | None = None) -> None:
    """Pay a live agent's first-turn costs at start (a dashboard, a server): the parser is
    loaded and run once and, given the embedder the agent's extractor will use, the
    intent, goal, attribute, command and people examples are embedded through it, so its
    cache holds them and the first turn only looks them up (else that turn embeds them
    all: half a second of CPU on this machine)."""
    warm_parser()
    if embedder is not None:
        Extractor(embedder).warm_classifiers()


def extract_slots(text: str, *, speaker: str = USER, at: float | None = None) -> list[SlotValue]:
    """The slot values of one text with the default extractor: who (``subject``), which
    attribute (``slot``), what value, and its number, unit, time marker and negation."""
    return default_extractor().slots(text, speaker=speaker, at=at)
