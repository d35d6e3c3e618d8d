"""Slot values: who a value is about, which attribute it sets, and how it is qualified.

The typed values of ``patterns`` are placed in the dependency parse: the noun they attach
to names the slot ("a hotel under 180 EUR per night" -> ``hotel budget``; "my budget for
the hotel is 200 euros" -> ``hotel budget`` too), the clause's subject and possessors say
whose value it is ("my wife wants ..." -> ``user's wife``, not the user's constraint), a
``neg`` arc negates it and the clause's time words mark it ("until", "since", "used to",
"now"; a past-tense verb: "past"). A free choice without a typed value ("make it SF Express
cash on delivery") is named by the nearest labelled attribute example (``labels``).

Only closed grammatical classes are spelled out here (pronouns, light verbs, time
conjunctions); everything else comes from the parse or the embedder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_core.context.extract.patterns import (
    AMOUNT,
    DATE,
    DURATION,
    EMAIL,
    IDENTIFIER,
    MONEY,
    PEOPLE,
    TIME,
    Value,
    number_of,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

    from memory_core.embedding.prototypes import PrototypeClassifier

CHOICE = "choice"
NUMBER = "number"
"""The kind of a plain number that counts or sizes a noun ("size 43", "3 bedrooms")."""
"""The kind of a slot value that is a free choice, not a typed value."""
USER, ASSISTANT = "user", "assistant"

THIRD_PERSON = frozenset({"he", "him", "his", "she", "her", "hers", "they", "them", "their"})
OTHER_PERSON = "someone else"
MAYBE = "?"
"""Prefix of a subject that may be a person ("co-worker has unlimited at $45") or a thing
("the hotel costs 200"), decided by the people classifier in one batch."""
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself"})
LIGHT_VERBS = frozenset(
    {"be", "have", "do", "make", "get", "want", "need", "like", "would", "let", "take",
     "give", "keep", "say", "tell", "think", "know", "try", "can", "could", "will", "go",
     "spend", "pay", "cost", "set", "prefer", "mean"}
)  # fmt: skip
CHANGE_VERBS = frozenset(
    {"change", "switch", "update", "move", "push", "shift", "increase", "raise", "lower",
     "reduce", "bump", "reschedule", "postpone", "extend", "upgrade", "downgrade", "settle"}
)  # fmt: skip
"""Verbs that say a value changes, never which attribute it is ("push it to 1:15", "move to
Tuesdays", "increase it to thirty pounds": the slot is the one in force), and whose "from X
to Y" is a change, not a range."""
KIND_WORDS = {
    MONEY: "budget", AMOUNT: "budget", DATE: "date", TIME: "time", DURATION: "duration",
    EMAIL: "email", PEOPLE: "party size",
}  # fmt: skip
MARKERS = {"until": "until", "till": "until", "since": "since", "anymore": "used to",
           "now": "now", "currently": "now", "longer": "used to"}  # fmt: skip
CHOICE_MIN_SIMILARITY = 0.5
PERSON_MIN_SIMILARITY = 0.5
ANSWER_MIN_SIMILARITY = 0.4
"""A verbless choice named by the offer or question it answers: a whole sentence of the
other side is further from the short attribute examples than a verb phrase, and that it
answers one is itself evidence that it is a choice."""
MAX_CHOICES = 4
"""Most free-choice candidates read from one sentence."""
MAX_TURN_CHOICES = 6
"""Most free-choice candidates read from one turn, the first ones said: each adds its tokens
to the turn's phrase model call (a long story of a turn had 10, ~2 ms CPU each on this
machine). Typed values (amounts, dates, counts, ids) are still read throughout the turn.
No task turn of the dev split has more than 4; 20 of the 2,080 LoCoMo dev turns have more."""
MAX_CHOICE_TOKENS = 12
"""A free choice is named by its nearest attribute example when at least this close."""
NOUNS = ("NOUN", "PROPN")


@dataclass(frozen=True, slots=True)
class SlotValue:
    """One value a turn gives to one attribute of one subject."""

    subject: str
    """Whose value: ``user``, ``assistant``, ``user's wife``, a name."""
    slot: str
    """A normalised attribute key: ``hotel budget``, ``party size``, ``delivery method``."""
    value: str
    """The value as said: ``180 EUR per night``."""
    kind: str = CHOICE
    """``money``, ``people``, ``date``, ... (``patterns.KINDS``) or ``choice``."""
    number: float | None = None
    unit: str | None = None
    per: str | None = None
    resolved: str | None = None
    """A date or time resolved against the turn's time (ISO), when there was one."""
    time_marker: str | None = None
    """``until`` / ``since`` / ``used to`` / ``now`` / ``past`` or None."""
    negated: bool = False
    topic: str | None = None
    """The thing the value is about (``hotel``), when the parse names one."""
    confidence: float = 1.0
    """How sure the slot name is (1 for a parse-named slot; the similarity for a choice)."""
    start: int = 0
    end: int = 0
    replaces: str | None = None
    """The value this one is said to replace ("8 instead of 7:30", "by sms, not email",
    "make it 9pm rather than 6"): the graph changes the constraint holding it."""


def slot_values(
    text: str,
    values: Sequence[Value],
    doc: Doc | None,
    *,
    speaker: str = USER,
    namer: PrototypeClassifier | None = None,
    people: PrototypeClassifier | None = None,
    reply_to: Doc | None = None,
    candidates: Sequence[tuple[Span, Token, str]] | None = None,
) -> list[SlotValue]:
    """The slot values of one text from its typed values and parse (``doc`` may be None,
    or cover only the start of a long text; ``reply_to``: the other side's turn before,
    which names what a choice said without a verb is about; ``candidates``: the text's
    ``choice_candidates`` when the caller has found them already)."""
    taken_tokens: set[int] = set()
    if doc is not None:
        for v in values:
            span = doc.char_span(v.start, v.end, alignment_mode="expand")
            taken_tokens.update(t.i for t in span or ())
    found = _merged([_typed(v, doc, speaker, taken_tokens) for v in values], text, doc)
    if doc is not None:
        found += _counts(doc, taken_tokens, speaker)
    if doc is not None and namer is not None:
        counted = [(v.start, v.end, _as_number(v.value) is not None) for v in found if v.end]
        if candidates is None:
            candidates = choice_candidates(doc, [(v.start, v.end) for v in values], reply_to)
        found += _choices(namer, speaker, candidates, counted)
    if doc is not None:
        found = _from_to(found, text, doc)
    return _resolve_maybe(_replacements(text, found), speaker, people)


_FROM_TO = re.compile(
    r"\bfrom\s+(?P<old>(?:[^\s,.;:!?]|[.:](?=\d))+(?:\s+(?:[^\s,.;:!?]|[.:](?=\d))+){0,4}?)"
    r"\s+(?:to|into)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
"""The value a change starts from, right before the value it goes to: "from Monday to
(Tuesday)", "from 500 to (800 euros)", "from monthly to (annual billing)"."""


def _from_to(found: list[SlotValue], text: str, doc: Doc) -> list[SlotValue]:
    """ "Move it from Monday to Tuesday", "change the limit from 500 to 800 euros": in a
    sentence with a verb of change, the value after "to" replaces the one after "from"
    (as "X instead of Y" does), and a value read inside the "from" part is dropped: it is
    what was, not a constraint. Without such a verb "from 9 to 5" is a range."""
    out: list[SlotValue] = []
    dropped: list[tuple[int, int]] = []
    for value in found:
        said = _FROM_TO.search(text, max(0, value.start - 80), value.start) if value.end else None
        if said is not None and not value.replaces and _changes(doc, value.start):
            value = replace(value, replaces=said["old"])
            dropped.append((said.start("old"), said.end("old")))
        out.append(value)
    return [v for v in out if not any(s <= v.start and v.end <= e for s, e in dropped)]


def _changes(doc: Doc, at: int) -> bool:
    """Whether the sentence around character ``at`` has a verb of change."""
    token = doc.char_span(at, at + 1, alignment_mode="expand")
    return token is not None and any(t.lemma_ in CHANGE_VERBS for t in token.sent)


_INSTEAD = re.compile(
    r"(?P<sep>\s*,?\s*(?:instead\s+of|rather\s+than|in\s+place\s+of|(?:and\s+|but\s+)?not))\s+"
    r"(?P<old>(?:the\s+)?(?:[^\s,.;:!?]|[.:](?=\d))+"
    r"(?:\s+(?!(?:and|but|please|pls|thanks|because|since|as)\b)(?:[^\s,.;:!?]|[.:](?=\d))+){0,4})",
    re.IGNORECASE,
)
"""A value followed by the one it replaces: "8 instead of 7:30", "9pm not 6", "by sms, not
email", "my office rather than home" (closed-class connectives; the old value is the next
few words up to punctuation or a conjunction)."""


def _replacements(text: str, found: list[SlotValue]) -> list[SlotValue]:
    """Mark each value said with the one it replaces ("X instead of Y", "X, not Y"): X
    carries ``replaces`` = Y, and a value read inside Y is dropped (it is what was, not a
    new constraint). A free choice that spans both ("my office instead of home") is cut
    to X."""
    out: list[SlotValue] = []
    dropped: list[tuple[int, int]] = []
    for value in found:  # in the order found: the graph applies them in this order
        own = _INSTEAD.search(value.value) if value.kind == CHOICE else None
        if own is not None and own.start() > 0:
            cut = value.start + own.start()
            value = replace(
                value,
                value=value.value[: own.start()].strip(" ,"),
                end=cut,
                replaces=own["old"],
            )
            dropped.append((cut, value.start + own.end()))
        elif value.end:
            after = _INSTEAD.match(text, value.end)
            if after is not None:
                value = replace(value, replaces=after["old"])
                dropped.append((after.start("old"), after.end("old")))
        out.append(value)
    return [v for v in out if not any(s <= v.start and v.end <= e for s, e in dropped)]


def _resolve_maybe(
    found: list[SlotValue], speaker: str, people: PrototypeClassifier | None
) -> list[SlotValue]:
    """A bare noun as the subject is someone else when the classifier says it names a person
    ("co-worker", "my sister"), else the value is the speaker's ("the hotel costs 200")."""
    maybe = sorted({v.subject[1:] for v in found if v.subject.startswith(MAYBE)})
    if not maybe:
        return found
    persons = set()
    if people is not None:  # the noun alone: "wife" of "user's wife"
        nouns = [who.rsplit("'s ", 1)[-1] for who in maybe]
        persons = {
            who
            for who, near in zip(maybe, people.nearest_many(nouns), strict=True)
            if near.label == "person" and near.similarity >= PERSON_MIN_SIMILARITY
        }
    return [
        replace(v, subject=v.subject[1:] if v.subject[1:] in persons else _self(speaker))
        if v.subject.startswith(MAYBE)
        else v
        for v in found
    ]


# -- typed values ----------------------------------------------------------------------
def _typed(value: Value, doc: Doc | None, speaker: str, taken: set[int]) -> SlotValue:
    span = doc.char_span(value.start, value.end, alignment_mode="expand") if doc else None
    text = value.text.strip()
    if value.kind in (DATE, TIME) and text.endswith(".") and not text.endswith("m."):
        text = text[:-1]  # "on 3 July." ends a sentence ("10 a.m." keeps its dot)
    if span is None or len(span) == 0:
        return SlotValue(
            _self(speaker), _slot_name(value, None, copular=False), text, value.kind,
            value.number, value.unit, value.per, value.resolved, start=value.start,
            end=value.end,
        )  # fmt: skip
    topic, copular = _topic(span, taken)
    verb = _governing_verb(span.root)
    return SlotValue(
        subject=_subject(topic, verb, speaker, span.sent),
        slot=_slot_name(value, topic, copular=copular),
        value=text,
        kind=value.kind,
        number=value.number,
        unit=value.unit,
        per=value.per,
        resolved=value.resolved,
        time_marker=_time_marker(span.sent, verb),
        negated=_negated(verb, topic),
        topic=_phrase(topic) if topic is not None else None,
        start=value.start,
        end=value.end,
    )


def _slot_name(value: Value, topic: Token | None, *, copular: bool) -> str:
    if value.kind == IDENTIFIER:
        return f"{value.unit or 'reference'} id"
    if value.kind in (PEOPLE, EMAIL):
        return KIND_WORDS[value.kind]
    word = KIND_WORDS.get(value.kind, value.kind)
    if topic is None:
        return word
    phrase = _phrase(topic)
    return phrase if copular or phrase.endswith(word) else f"{phrase} {word}"


def _topic(span: Span, taken: set[int]) -> tuple[Token | None, bool]:
    """The token a value is about, and whether it is the attribute itself (the subject of
    a copula: "my budget is 200") rather than the thing constrained ("hotel under 200")."""
    inside = {t.i for t in span} | taken  # another value ("for 4 people") is no topic
    node = span.root
    for _ in range(8):
        parent = node.head
        if parent.i == node.i:
            break
        if parent.i in inside or parent.dep_ in ("attr", "acomp", "oprd", "prep", "quantmod"):
            node = parent
            continue
        if parent.pos_ in NOUNS:
            return parent, False
        if parent.pos_ in ("VERB", "AUX"):
            noun = _clause_noun(parent, inside)
            if noun is not None:
                return noun, parent.lemma_ == "be" and noun.dep_ in ("nsubj", "nsubjpass")
            if parent.lemma_ not in LIGHT_VERBS | CHANGE_VERBS and not _says_it(parent):
                return parent, False
        node = parent
    return None, False


def _says_it(verb: Token) -> bool:
    """A verb done to "it" / "that" ("increase it to thirty pounds", "push it to 1:15") is a
    change of the thing said before, not a slot of its own: the value names no topic."""
    return any(c.dep_ in ("dobj", "nsubjpass") and c.pos_ == "PRON" and c.lower_ not in
               FIRST_PERSON | SECOND_PERSON for c in verb.children)  # fmt: skip


def _clause_noun(verb: Token, inside: set[int]) -> Token | None:
    """The noun a verb's clause is about: a prepositional object first ("spend 200 on the
    hotel"), then the subject, then the direct object; never a pronoun or the value."""
    by_dep: dict[str, Token] = {}
    for child in verb.children:
        if child.i in inside:
            continue
        if child.dep_ == "prep":
            for grand in child.children:
                if grand.dep_ == "pobj" and grand.pos_ in NOUNS and grand.i not in inside:
                    by_dep.setdefault("pobj", grand)
        elif child.dep_ in ("nsubj", "nsubjpass", "dobj") and child.pos_ in NOUNS:
            by_dep.setdefault(child.dep_, child)
    order = ("nsubj", "nsubjpass", "pobj") if verb.lemma_ == "be" else ("pobj", "dobj", "nsubj")
    for dep in order:
        if dep in by_dep:
            return by_dep[dep]
    return None


def _phrase(token: Token, inside: frozenset[int] = frozenset()) -> str:
    """A normalised name for a noun (or verb): its compounds and lemma, qualified by a
    "for"/"of" object ("budget for the hotel" -> "hotel budget"), lower case."""
    words = [c.lemma_.lower() for c in token.children if c.dep_ in ("compound", "prt")]
    head = token.lemma_.lower() if token.pos_ != "PROPN" else token.text.lower()
    parts = [head, *words] if token.pos_ == "VERB" else [*words, head]
    for child in token.children:
        if child.dep_ == "prep" and child.lower_ in ("for", "of"):
            objects = [
                g
                for g in child.children
                if g.dep_ == "pobj"
                and g.pos_ in NOUNS
                and g.i not in inside
                and not any(c.like_num for c in g.children)
            ]
            if objects:
                parts = [*_compounds(objects[0]), *parts]
                break
    return " ".join(p for p in parts if p.isalnum() or " " in p or "-" in p) or head


def _compounds(token: Token) -> list[str]:
    words = [c.lemma_.lower() for c in token.children if c.dep_ == "compound"]
    return [*words, token.lemma_.lower()]


def _governing_verb(token: Token) -> Token | None:
    node = token
    for _ in range(10):
        if node.pos_ in ("VERB", "AUX"):
            return node
        if node.head.i == node.i:
            return None
        node = node.head
    return None


def _self(speaker: str) -> str:
    return speaker


def _other(speaker: str) -> str:
    return {USER: ASSISTANT, ASSISTANT: USER}.get(speaker, "listener")


def _person(token: Token, speaker: str) -> str | None:
    """Who a pronoun or a possessed noun names: "I" -> the speaker, "my wife" ->
    "user's wife", "Anna" -> "Anna"; None for a thing."""
    lower = token.lower_
    if lower in FIRST_PERSON:
        return _self(speaker)
    if lower in SECOND_PERSON:  # "can you move it to Friday?" asks for the user's value
        return USER if _request(token) else _other(speaker)
    if token.ent_type_ == "PERSON":
        return token.text
    if lower in THIRD_PERSON:  # "his limit is 300": the person last named, else someone else
        named = [e for e in token.doc.ents if e.label_ == "PERSON" and e.end <= token.i]
        return named[-1].text if named else OTHER_PERSON
    owner = next((c for c in token.children if c.dep_ == "poss"), None)
    if owner is not None and token.pos_ == "NOUN":
        whose = _person(owner, speaker)
        if whose is not None:  # "my wife" is someone, "our flight" a thing: asked in batch
            return f"{MAYBE}{whose.removeprefix(MAYBE)}'s {token.lemma_.lower()}"
    if owner is None and token.pos_ == "NOUN" and token.dep_ in ("nsubj", "nsubjpass"):
        return f"{MAYBE}{token.lemma_.lower()}"  # a person or a thing? ``slot_values`` asks
    return None


def _request(you: Token) -> bool:
    """ "Can you / could you / would you ..." as the subject of a question: a request for
    something the speaker wants, not the other side's own value."""
    verb = you.head
    return you.dep_ == "nsubj" and any(
        c.dep_ == "aux" and c.tag_ == "MD" and c.i < you.i for c in verb.children
    )


def _subject(
    topic: Token | None, verb: Token | None, speaker: str, sentence: Span | None = None
) -> str:
    """Whose value: the agent of the clause ("my wife wants a hotel under 200"), else the
    possessor of the topic ("my brother's budget"), else the first possessive pronoun of
    the sentence ("your order ... ships by courier"), else the speaker."""
    clause = verb
    chain: set[int] = set()  # the value's clause and those it hangs from
    for _ in range(4):  # up through reported speech: "my boss said the budget is 5000"
        if clause is None:
            break
        chain.add(clause.i)
        for child in clause.children:
            if child.dep_ in ("nsubj", "nsubjpass") and (topic is None or child.i != topic.i):
                if any(c.lower_ in FIRST_PERSON for c in child.conjuncts):
                    return _self(speaker)  # "my wife and I are looking for ...": ours too
                who = _person(child, speaker)
                if who is not None:
                    return who
        clause = clause.head if clause.dep_ in ("ccomp", "xcomp", "conj") else None
    if topic is not None:
        owner = next((c for c in topic.children if c.dep_ == "poss"), None)
        if owner is not None:
            possessed = _person(owner, speaker)
            if possessed is not None:
                return possessed
    if sentence is not None:  # "your order ... should arrive Thursday", not "our flight
        for token in sentence:  # moved" beside "return on the 10th": the value's clauses
            if token.dep_ != "poss" or token.pos_ != "PRON":
                continue
            owner_verb = _governing_verb(token)
            if verb is None or owner_verb is None or owner_verb.i in chain:
                return _person(token, speaker) or _self(speaker)
    return _self(speaker)


def _negated(verb: Token | None, topic: Token | None) -> bool:
    for token in (verb, topic):
        if token is not None and any(
            c.dep_ == "neg" or (c.dep_ == "det" and c.lower_ == "no") for c in token.children
        ):
            return True
    return False


def _time_marker(sentence: Span, verb: Token | None) -> str | None:
    words = [t.lower_ for t in sentence]
    for i, word in enumerate(words):
        if word == "used" and i + 1 < len(words) and words[i + 1] == "to":
            return "used to"
    for i, word in enumerate(words):
        if word == "longer" and (i == 0 or words[i - 1] not in ("no", "not", "any")):
            continue  # "a longer one" compares; "no longer" / "not any longer" ends a value
        if word in MARKERS:
            return MARKERS[word]
    if verb is not None and verb.tag_ == "VBD":
        return "past"
    return None


def _merged(values: list[SlotValue], text: str, doc: Doc | None = None) -> list[SlotValue]:
    """Values of one slot side by side ("Thursday 9 October", "Friday at 7pm" stay two
    slots, but "Thursday, 9 October" is one value): joined, so they do not replace each
    other."""
    out: list[SlotValue] = []
    for value in values:
        last = out[-1] if out else None
        if (
            last is not None
            and (last.subject, last.slot, last.kind) == (value.subject, value.slot, value.kind)
            and len(text[last.end : value.start].strip(" ,")) == 0
        ):
            joined = text[last.start : value.end].strip()
            out[-1] = replace(last, value=joined, end=value.end, resolved=value.resolved)
            continue
        if last is not None and _range(last, value, text, doc):  # "13:00 to 17:00": one window
            joined = text[last.start : value.end].strip()
            out[-1] = replace(last, value=joined, end=value.end)
            continue
        out.append(value)
    return out


_RANGE = re.compile(r"\s*(?:to|till|until|-|–)\s*", re.IGNORECASE)
_RANGE_START = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)


def _range(last: SlotValue, value: SlotValue, text: str, doc: Doc | None) -> bool:
    """Two times or dates of one subject said as a window ("13:00 to 17:00", "8-12",
    "between 8:00 and 12:00", "from 9am to 5pm"), except "from X to Y" after a verb of
    change, which is a change (``_from_to``)."""
    if last.subject != value.subject or last.kind != value.kind or last.kind not in (TIME, DATE):
        return False
    between = text[last.end : value.start]
    before = text[max(0, last.start - 12) : last.start]
    if before.lower().rstrip().endswith("from") and (doc is None or _changes(doc, last.start)):
        return False
    if between.strip().lower() == "and":
        return _RANGE_START.search(before) is not None
    return _RANGE.fullmatch(between) is not None


# -- plain numbers ---------------------------------------------------------------------
def _counts(doc: Doc, taken: set[int], speaker: str) -> list[SlotValue]:
    """A number that counts or sizes a common noun the regular expressions do not know
    ("size 43", "3 bedrooms", "a 2 TB drive"): the noun is the slot."""
    found = []
    for token in doc:
        if (
            token.pos_ != "NUM"
            or token.i in taken
            or token.ent_type_ in ("DATE", "TIME", "PERCENT", "ORDINAL", "MONEY")
        ):
            continue
        head = token.head
        if _leads_a_number(token):
            continue  # "twenty" of "twenty-five", "three" of "three fifty": read with the last
        said = _number_words(token)
        if not _digits(token) and token.dep_ != "nummod" and len(said) == 1:
            continue  # a number word counts a noun ("eight sessions"), else it is a pronoun
        if head.pos_ != "NOUN" or head.i in taken:  # "we can go to 1400": no noun of its own
            found += _bare(said, taken, speaker) if _digits(token) or len(said) > 1 else []
            continue
        number = _as_number(said.text)
        if number is None:
            continue
        span = doc[min(said.start, head.i) : max(said.end - 1, head.i) + 1]
        if len(span) > len(said) + 2:  # the noun is further away: the value is the number alone
            span = said
        verb = _governing_verb(head)
        found.append(
            SlotValue(
                subject=_subject(head, verb, speaker, span.sent),
                slot=_phrase(head),
                value=span.text,
                kind=NUMBER,
                number=number,
                time_marker=_time_marker(span.sent, verb),
                negated=_negated(verb, head),
                topic=_phrase(head),
                start=span.start_char,
                end=span.end_char,
            )
        )
    return found


def _leads_a_number(token: Token) -> bool:
    """A number word right before the number word it belongs to ("twenty" of
    "twenty-five", "three" of "three fifty")."""
    head, doc = token.head, token.doc
    if head.pos_ != "NUM" or _digits(token) or head.i <= token.i:
        return False
    return head.i == token.i + 1 or (head.i == token.i + 2 and doc[token.i + 1].text == "-")


def _number_words(token: Token) -> Span:
    """The whole number a number token ends ("twenty-five", "three fifty", "two thousand"):
    the number words and hyphens right before it."""
    doc, first = token.doc, token.i
    if _digits(token):
        return doc[first : first + 1]
    while first > 0 and (
        (doc[first - 1].pos_ == "NUM" and not _digits(doc[first - 1]))
        or (doc[first - 1].text == "-" and first > 1 and doc[first - 2].pos_ == "NUM")
    ):
        first -= 1
    return doc[first : token.i + 1]


def _bare(said: Span, taken: set[int], speaker: str) -> list[SlotValue]:
    """A number on its own ("we can go to 1400", "bump my budget to 1000", "budget's now
    three fifty"): the clause's noun names the slot when there is one ("budget"), else none
    (``topic`` None: the graph decides which value it changes, or drops it)."""
    number = _as_number(said.text)
    if number is None:
        return []
    token = said[-1]
    topic, _ = _topic(said, taken)
    noun = topic if topic is not None and topic.pos_ == "NOUN" else None
    verb = _governing_verb(token)
    return [
        SlotValue(
            subject=_subject(noun, verb, speaker, token.sent),
            slot=_phrase(noun) if noun is not None else "number",
            value=said.text,
            kind=NUMBER,
            number=number,
            time_marker=_time_marker(token.sent, verb),
            negated=_negated(verb, noun),
            topic=_phrase(noun) if noun is not None else None,
            start=said.start_char,
            end=said.end_char,
        )
    ]


def _digits(token: Token) -> bool:
    return any(c.isdigit() for c in token.text)


def _as_number(text: str) -> float | None:
    return number_of(text)


# -- free choices ----------------------------------------------------------------------
def _choices(
    namer: PrototypeClassifier,
    speaker: str,
    candidates: Sequence[tuple[Span, Token, str]],
    counted: Sequence[tuple[int, int, bool]] = (),
) -> list[SlotValue]:
    """Clauses that set an attribute without a typed value ("switch it to SF Express",
    "I'd like a window seat"): each verb's object phrase (``choice_candidates``), named by
    the nearest labelled attribute example when it is close enough. Questions set nothing."""
    if not candidates:
        return []
    texts = [text for _, _, text in candidates]
    found = []
    for (obj, verb, text), near in zip(candidates, namer.nearest_many(texts), strict=True):
        verbless = obj.start <= verb.i < obj.end
        if any(
            obj.start_char < e and s < obj.end_char and (verbless or not bare)
            for s, e, bare in counted
        ):  # "make it 15 seats", "Vegetarian menu for 5 of them": the count of a noun
            continue
        answer = verbless and text != obj.text
        if near.similarity < (ANSWER_MIN_SIMILARITY if answer else CHOICE_MIN_SIMILARITY):
            continue
        found.append(
            SlotValue(
                subject=_subject(None, verb, speaker, obj.sent),
                slot=near.label,
                value=obj.text.strip(" .,!;"),
                kind=CHOICE,
                time_marker=_time_marker(obj.sent, verb),
                negated=_negated(verb, None),
                confidence=round(near.similarity, 3),
                start=obj.start_char,
                end=obj.end_char,
            )
        )
    return found


def choice_candidates(
    doc: Doc, taken: Sequence[tuple[int, int]], reply_to: Doc | None = None
) -> list[tuple[Span, Token, str]]:
    """The object phrases that may be free choices, their verbs and the text the attribute
    namer classifies ("switch SF Express, cash on delivery"); also used to embed a
    replay's candidates in one call before extraction. A choice said without a verb
    ("Stalls, please.") is named by what it answers: the sentence of ``reply_to`` that
    offered it ("there are stalls seats at 65 and circle seats at 45"), else its question."""
    found = []
    for sentence in doc.sents:
        if _is_question(sentence):
            continue
        answers: list[tuple[Span, Token, str, bool]] = []
        for verb, obj in _object_phrases(sentence):
            overlaps = any(obj.start_char < e and s < obj.end_char for s, e in taken)
            if obj.root.pos_ in ("PRON", "DET") or overlaps:
                continue
            if obj.start <= verb.i < obj.end:  # a choice said without a verb
                text, offered = _answered(obj, reply_to)
                answers.append((obj, verb, text, offered))
            else:
                found.append((obj, verb, f"{verb.lemma_} {obj.text}"))
        # "Home delivery, thanks.": the parts the other side offered, else the first part
        chosen = [a for a in answers if a[3]]
        found += [(obj, verb, text) for obj, verb, text, _ in chosen or answers[:1]]
        if len(found) >= MAX_TURN_CHOICES:
            break
    return found[:MAX_TURN_CHOICES]


def _verbless(sentence: Span) -> list[Span]:
    """Choices stated without a verb ("Standard please.", "Kreuzberg then.", "Courier
    collection, Tuesday if possible."): in a sentence with no verb, each comma-separated
    part that names something (a noun or adjective) is a value, without the words around
    it that carry no content (interjections, adverbs, punctuation)."""
    if any(t.pos_ in ("VERB", "AUX") for t in sentence):
        return []
    parts: list[list[Token]] = [[]]
    for token in sentence:
        if token.pos_ == "PUNCT" and token.text in ",;:.!":
            parts.append([])
        elif token.pos_ not in _NO_CONTENT:
            parts[-1].append(token)
    doc = sentence.doc
    return [
        doc[part[0].i : part[-1].i + 1]
        for part in parts
        if any(t.pos_ in ("NOUN", "PROPN", "ADJ") for t in part)
        and part[-1].i - part[0].i < MAX_CHOICE_TOKENS
    ]


_NO_CONTENT = frozenset({"INTJ", "ADV", "PUNCT", "CCONJ", "SPACE", "X"})
_PERSONS = FIRST_PERSON | SECOND_PERSON


def _answered(fragment: Span, reply_to: Doc | None) -> tuple[str, bool]:
    """The text that names a verbless choice and whether the other side offered it: its
    sentence that named one of the choice's words, else the question it answers with the
    choice, else the choice alone."""
    if reply_to is None:
        return fragment.text, False
    words = {w for t in fragment if t.pos_ in ("NOUN", "PROPN", "ADJ") for w in _forms(t)}
    sentences = list(reply_to.sents)
    for sentence in sentences:
        if any(words & _forms(token) for token in sentence):
            return sentence.text.strip(), True
    if sentences and _is_question(sentences[-1]):
        return f"{sentences[-1].text.strip()} {fragment.text}", False
    return fragment.text, False


def _forms(token: Token) -> set[str]:
    return {token.lower_, token.lemma_.lower()}


def _is_question(sentence: Span) -> bool:
    return sentence.text.rstrip().endswith("?") or sentence[0].tag_ in ("WDT", "WP", "WRB")


def _object_phrases(sentence: Span) -> list[tuple[Token, Span]]:
    """Each verb's object (``dobj``, ``attr``, ``oprd``, a clausal complement) or, without
    one, the object of its "to"/"with"/"by"/"via"/"for" phrase; at most ``MAX_CHOICES``."""
    found: list[tuple[Token, Span]] = []
    doc = sentence.doc
    root = sentence.root.i  # a span's root is searched for on every read
    for verb in sentence:
        if len(found) >= MAX_CHOICES:
            break
        if verb.pos_ not in ("VERB", "AUX") and verb.i != root:
            continue
        span = None
        for child in verb.children:
            if child.dep_ not in ("dobj", "attr", "oprd", "ccomp") or child.lower_ == "it":
                continue
            if child.lower_ in _PERSONS or child.pos_ in ("VERB", "AUX"):
                continue
            subtree = list(child.subtree)
            span = doc[subtree[0].i : subtree[-1].i + 1]
            break
        if span is None:
            for child in verb.children:
                if child.dep_ == "prep" and child.lower_ in ("to", "with", "by", "via", "for"):
                    subtree = list(child.subtree)
                    if len(subtree) > 1:
                        span = doc[subtree[1].i : subtree[-1].i + 1]
                        break
        if span is not None and span[0].lower_ == "it" and len(span) > 1:
            span = span[1:]  # "make it SF Express": the value follows "it"
        if span is not None and len(span) <= MAX_CHOICE_TOKENS:
            found.append((verb, span))
    if not found:
        found = [(fragment.root, fragment) for fragment in _verbless(sentence)[:MAX_CHOICES]]
    return found
