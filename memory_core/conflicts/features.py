"""Turn one memory text into the features the rule judge compares.

Pure regex and dictionary look-ups: tokens with character offsets (for highlighting),
cue phrases (negation, correction, sentiment, ...), typed values (amounts, times, dates,
days, names, exclusive choices) and the content words that say what the text is about.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from memory_core.conflicts import lexicon as lx

_TOKEN = re.compile(
    r"[$€£]?\d+(?:[.,:]\d+)*(?:%|st|nd|rd|th|am|pm|k)?(?![A-Za-z])"
    r"|[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)*"
)
_CONTRACTIONS: dict[str, tuple[str, ...]] = {
    "can't": ("can", "not"),
    "cannot": ("can", "not"),
    "won't": ("will", "not"),
    "i'm": ("i", "am"),
    "i'd": ("i", "would"),
    "i'll": ("i", "will"),
    "i've": ("i", "have"),
    "it's": ("it", "is"),
    "let's": ("let", "us"),
}
_MAX_PHRASE = 3
# Sentence ends, semicolons, commas and a few conjunctions that start a new claim.
# Punctuation must be followed by space or the end, so "6.5 bar" and "$8,000" stay whole.
_CLAUSE_BREAK = re.compile(r"[.!?;:]+(?=\s|$)|,(?=\s)|\s(?:but|so|and then)\s", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[.!?]+(?=\s|$)")
_FILLERS = lx.STOPWORDS - {"over", "to", "than"}


@dataclass(frozen=True, slots=True)
class Token:
    """One word of the text; ``norm`` is lower case with variants folded, ``key`` its stem."""

    norm: str
    key: str
    start: int
    end: int
    capitalised: bool
    initial: bool = False
    """First word of a sentence or clause (after ". ", ", ", "; ", ...)."""


@dataclass(frozen=True, slots=True)
class Cue:
    """A matched lexicon phrase covering tokens ``first``..``last`` (inclusive)."""

    roles: frozenset[str]
    polarity: int
    first: int
    last: int
    text: str


@dataclass(frozen=True, slots=True)
class Value:
    """A typed value: ``kind`` says which values are comparable.

    ``text`` is canonical so equal values compare equal: digits without separators for
    numbers, stems for names and choices (so a name matches the same word elsewhere).
    """

    kind: str
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Features:
    """Everything the rules need to know about one text."""

    text: str
    tokens: tuple[Token, ...]
    cues: tuple[Cue, ...]
    values: tuple[Value, ...]
    context: frozenset[str]
    """Stems of content words that are neither cues nor values: the attribute talked about."""
    topic: frozenset[str]
    """``context`` plus names and exclusive choices: what the text is about."""
    topics: frozenset[str]
    """Coarse topic classes touched (food, travel, ...)."""
    negated: bool
    sentiment: int
    """Product of the signs of sentiment cues; 0 when the text expresses none."""
    preference: tuple[str, str] | None = None
    """``(preferred, rejected)`` for "prefer X over Y"."""
    negated_keys: frozenset[str] = field(default=frozenset())
    """Stems and value texts within reach of a negation: what is actually negated."""
    corrected_keys: frozenset[str] = field(default=frozenset())
    """Stems and value texts right after a correction cue ("instead of emailing")."""
    rejected_keys: frozenset[str] = field(default=frozenset())
    """The word right after "instead of" / "rather than": what the text explicitly rejects."""
    roles: frozenset[str] = field(default=frozenset())

    def has(self, role: str) -> bool:
        return role in self.roles

    def surface(self, cue: Cue) -> str:
        """The cue as written ("can't stand", not "can not stand")."""
        return self.text[self.tokens[cue.first].start : self.tokens[cue.last].end]

    def cue_spans(self, *roles: str) -> list[tuple[int, int]]:
        """Character ranges of the cues having any of ``roles``."""
        return [
            (self.tokens[c.first].start, self.tokens[c.last].end)
            for c in self.cues
            if c.roles.intersection(roles)
        ]


def stem(word: str) -> str:
    """A deliberately small stemmer: enough to match run/runs/running, hike/hiking."""
    word = lx.SYNONYMS.get(word, word)
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _phrase_roles() -> dict[tuple[str, ...], tuple[frozenset[str], int]]:
    table: dict[tuple[str, ...], tuple[set[str], int]] = {}

    def add(phrases: Iterable[tuple[str, ...]], role: str, polarity: int = 0) -> None:
        for phrase in phrases:
            roles, old = table.setdefault(phrase, (set(), 0))
            roles.add(role)
            table[phrase] = (roles, polarity or old)

    add(lx.IDIOMS, "idiom")
    add(lx.NEGATIONS, "negation")
    add(lx.CESSATIONS, "negation")
    add(lx.CESSATIONS, "correction")
    add(lx.CORRECTIONS, "correction")
    add([p for p in lx.CORRECTIONS if "no" in p or "not" in p], "negation")
    add(lx.CHANGES, "change")
    add(lx.ADDITIONS, "addition")
    for phrase, polarity in lx.SENTIMENT.items():
        add([phrase], "sentiment", polarity)
    return {p: (frozenset(r), pol) for p, (r, pol) in table.items()}


_PHRASES = _phrase_roles()
_SLOT_OF: dict[str, str] = {w: slot for slot, words in lx.SLOTS.items() for w in words}
_TOPIC_OF: dict[str, frozenset[str]] = {}
for _topic, _words in lx.TOPICS.items():
    for _w in _words:
        _TOPIC_OF[_w] = _TOPIC_OF.get(_w, frozenset()) | {_topic}


def _tokenise(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        raw = match.group().replace("’", "'")
        lower = raw.lower()
        before = text[: match.start()].rstrip()
        initial = not before or before[-1] in ".!?:;"
        opens_clause = initial or before[-1] == ","
        capitalised = raw[0].isupper() and not initial and lower != "i"
        if lower in _CONTRACTIONS:
            parts: tuple[str, ...] = _CONTRACTIONS[lower]
        elif lower.endswith("n't"):
            parts = (lower[:-3], "not")
        elif "'" in lower:
            head, _, tail = lower.partition("'")
            parts = (head,) if tail == "s" else (head, tail)
        else:
            parts = (lower,)
        for part in parts:
            norm = lx.SYNONYMS.get(part, part)
            token = Token(norm, stem(norm), match.start(), match.end(), capitalised, opens_clause)
            tokens.append(token)
    return tokens


def _match_cues(tokens: list[Token]) -> list[Cue]:
    cues: list[Cue] = []
    i = 0
    while i < len(tokens):
        for size in range(min(_MAX_PHRASE, len(tokens) - i), 0, -1):
            phrase = tuple(t.norm for t in tokens[i : i + size])
            found = _PHRASES.get(phrase)
            if found is not None and phrase[0] in lx.CLAUSE_INITIAL and not tokens[i].initial:
                found = None  # "it might actually work" corrects nothing
            if found is not None:
                roles, polarity = found
                text = " ".join(phrase)
                cues.append(Cue(roles, polarity, i, i + size - 1, text))
                i += size
                break
        else:
            i += 1
    return cues


def _number(token: str) -> str:
    digits = re.sub(r"[^\d.:]", "", token.replace(",", ""))
    return digits.rstrip(".") or token


def _values(tokens: list[Token], covered: set[int]) -> tuple[list[Value], set[int]]:
    """Typed values, and the token indexes they use (so they are not content words)."""
    values: list[Value] = []
    used: set[int] = set()
    i = 0
    while i < len(tokens):
        found = _value_at(tokens, i, covered)
        if found is None:
            i += 1
            continue
        kind, text, last = found
        values.append(Value(kind, text, tokens[i].start, tokens[last].end))
        # A unit noun ("two cats", "32 GB") still says what the text is about.
        used.update(range(i, i + 1 if kind.startswith("number:") else last + 1))
        i = last + 1
    return values, used


def _value_at(tokens: list[Token], i: int, covered: set[int]) -> tuple[str, str, int] | None:
    """``(kind, canonical text, last token index)`` of a value starting at token ``i``."""
    tok = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    norm = tok.norm
    if norm[0] in "$€£" or norm[0].isdigit() or norm in lx.NUMBER_WORDS:
        number = str(lx.NUMBER_WORDS[norm]) if norm in lx.NUMBER_WORDS else _number(norm)
        if ":" in norm or norm.endswith(("am", "pm")):
            return "time", norm, i
        if nxt is not None and nxt.norm in ("am", "pm"):
            return "time", norm + nxt.norm, i + 1
        if norm.endswith(("st", "nd", "rd", "th")) and norm[0].isdigit():
            return "date", number, i
        if norm[0] in "$€£" or norm.endswith("k"):
            return "money", number, i
        if norm.endswith("%"):
            return "percent", number, i
        if nxt is not None and nxt.norm in lx.CURRENCIES:
            return "money", number, i + 1
        unit = nxt is not None and i + 1 not in covered and nxt.norm not in lx.STOPWORDS
        if unit and nxt is not None and nxt.norm.isalpha():
            return f"number:{nxt.key}", number, i + 1
        return "number", number, i
    if norm in lx.TIMES:
        return "time", norm, i
    if norm in lx.MONTHS and (norm != "may" or tok.capitalised):
        if nxt is not None and nxt.norm[:1].isdigit():
            return "date", f"{norm} {_number(nxt.norm)}", i + 1
        return "date", norm, i
    if tok.key in lx.WEEKDAYS or norm in lx.WEEKDAYS:
        return "day", tok.key, i
    if i in covered:
        return None
    if norm in _SLOT_OF:
        return f"slot:{_SLOT_OF[norm]}", stem(norm), i
    if tok.capitalised:
        last = i
        while last + 1 < len(tokens) and tokens[last + 1].capitalised and last + 1 not in covered:
            last += 1
        return "name", " ".join(t.key for t in tokens[i : last + 1]), last
    return None


def _preference(tokens: list[Token], cues: list[Cue]) -> tuple[str, str] | None:
    """``(X, Y)`` for "prefer X over/to/rather than Y" with single-word X and Y."""
    for cue in cues:
        if cue.text not in ("prefer", "prefers"):
            continue
        rest = [t for t in tokens[cue.last + 1 :] if t.norm not in _FILLERS]
        for k in range(1, len(rest) - 1):
            if rest[k].norm in ("over", "to", "than") and k == 1:
                return rest[0].key, rest[k + 1].key
    return None


def clauses(text: str) -> list[tuple[int, str]]:
    """``(offset, clause)`` pieces of ``text``, so long memories are compared claim by claim."""
    return _split(text, _CLAUSE_BREAK)


def sentences(text: str) -> list[tuple[int, str]]:
    """``(offset, sentence)`` pieces of ``text``: a claim whose attribute and value sit in
    different clauses ("my cap went up: it's 6,000 euros now") stays whole."""
    return _split(text, _SENTENCE_BREAK)


def _split(text: str, breaks: re.Pattern[str]) -> list[tuple[int, str]]:
    pieces: list[tuple[int, str]] = []
    start = 0
    for match in [*breaks.finditer(text), None]:
        end = match.start() if match else len(text)
        piece = text[start:end]
        if piece.strip():
            pieces.append((start + len(piece) - len(piece.lstrip()), piece.strip()))
        if match:
            start = match.end()
    return pieces


@lru_cache(maxsize=4096)
def extract(text: str) -> Features:
    """Features of ``text``; cached because candidate pairs repeat texts a lot."""
    tokens = _tokenise(text)
    cues = _match_cues(tokens)
    covered = {k for c in cues for k in range(c.first, c.last + 1)}
    values, used = _values(tokens, covered)
    context = frozenset(
        t.key
        for k, t in enumerate(tokens)
        if k not in covered and k not in used and t.norm not in lx.STOPWORDS and t.norm[0].isalpha()
    )
    named = frozenset(v.text for v in values if v.kind == "name" or v.kind.startswith("slot"))
    context |= {lx.HYPERNYMS[t.norm] for t in tokens if t.norm in lx.HYPERNYMS}
    topics = frozenset(c for t in tokens for c in _TOPIC_OF.get(t.norm, _TOPIC_OF.get(t.key, ())))
    # The first sentiment cue carries the stance; later ones usually just elaborate it.
    sentiment = next((c.polarity for c in cues if "sentiment" in c.roles), 0)
    roles = frozenset(r for c in cues for r in c.roles)
    negated_keys = _scope(tokens, cues, covered, values, "negation")
    corrected_keys = _scope(tokens, cues, covered, values, "correction")
    return Features(
        text=text,
        tokens=tuple(tokens),
        cues=tuple(cues),
        values=tuple(values),
        context=context,
        topic=context | named,
        topics=topics,
        negated="negation" in roles,
        sentiment=sentiment,
        preference=_preference(tokens, cues),
        roles=roles,
        negated_keys=negated_keys,
        corrected_keys=corrected_keys,
        rejected_keys=_rejected(tokens, covered),
    )


_REJECTORS = (("instead", "of"), ("rather", "than"))


def _rejected(tokens: list[Token], covered: set[int]) -> frozenset[str]:
    """Keys of the first content word after each "instead of" / "rather than"."""
    keys: set[str] = set()
    for k in range(len(tokens) - 1):
        if (tokens[k].norm, tokens[k + 1].norm) not in _REJECTORS:
            continue
        rest = (t for t in tokens[k + 2 :] if t.norm not in lx.STOPWORDS)
        first = next(rest, None)
        if first is not None:
            keys.add(first.key)
    return frozenset(keys)


_SCOPE_AFTER = 3
_SCOPE_BEFORE = 2


def _scope(
    tokens: list[Token], cues: list[Cue], covered: set[int], values: list[Value], role: str
) -> frozenset[str]:
    """Keys of the few content words after each cue of ``role`` (before it, for state cues).

    "as long as there are no lyrics" negates lyrics, not "long"; the rules use this to
    ignore a negation or correction about something the other text does not mention.
    """
    content = [k for k, t in enumerate(tokens) if k not in covered and t.norm not in lx.STOPWORDS]
    keys: set[str] = set()
    for cue in cues:
        if role not in cue.roles:
            continue
        after = [k for k in content if k > cue.last][:_SCOPE_AFTER]
        before = [k for k in content if k < cue.first][-_SCOPE_BEFORE:]
        reach = after + (before if cue.text in lx.STATE_NEGATIONS else [])
        for k in reach:
            tok = tokens[k]
            keys.add(tok.key)
            keys.update(v.text for v in values if v.start <= tok.start < v.end)
    return frozenset(keys)
