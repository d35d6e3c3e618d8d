"""Claims in a memory text: what each sentence says about whom, with which values, when.

A text is cut into sentences (and at ";" and "but", which often join a retraction to its
replacement). Each piece becomes a :class:`Claim`: its content words, typed values
(numbers with their unit, clock times, calendar dates, proper names), which of its words
are denied ("never", "no", "not ..."), and what makes it no claim about the speaker now:
a question (it states nothing, only presupposes its values) or a request (it states only
what it negates or rejects: "text me instead of emailing"), another person as
subject ("my brother ..."), the past ("used to", "as a kid"), an addition ("also").

The word lists here are closed grammatical classes (negators, tense and addition markers,
kin terms, calendar names, number words), not topic vocabulary: which attributes and
values are alike is left to word vectors (see ``vectors.py``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from memory_core.conflicts.vectors import is_common_word

ValueType = Literal["number", "time", "date", "name"]
SOMEONE = "she"
"""The subject of a piece that speaks of someone only as "he" / "she" (no name, no
relative): who it is, the piece does not say."""

_TOKEN = re.compile(
    r"[a-z]+[0-9]+\w*"  # alphanumeric codes: p99, 4B
    r"|[0-9]{1,2}(?::[0-9]{2})?\s?(?:am|pm)\b|[0-9]{1,2}:[0-9]{2}"  # clock times
    r"|[0-9][0-9,.]*(?:st|nd|rd|th|k)?\b"  # amounts and ordinals
    r"|[^\W\d_]+(?:['’][a-z]+)*",  # words, with "'s", "n't"
    re.IGNORECASE,
)
_PIECES = re.compile(r"(?<=[.!?])\s+|;\s*|\s+but\s+|\s+[-–—]+\s+", re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NEGATORS = _words("not no never none nothing without cannot nor")
_DISLIKE = _words("hate hated dislike avoid bore boring detest")
LIKE = _words("love like enjoy prefer fan favourite favorite want")
"""Stances: a dislike only contradicts a liking, not a mere mention ("stuck in a jam")."""
_ENDS = _DISLIKE | _words(
    "quit stopped left dropped cancelled canceled replaced instead rather forget scrap "
    "fail failed failing lost missed"
)
"""Words that end, reject or fail what follows them ("quit keto", "instead of X", "hate
running", "failed the test"): their object is denied like a negated one."""
_ALTERNATIVES = _words("instead rather")
"""Reject only what follows "than" / "of": "rather than fly", "instead of emailing"."""
_FREQUENT = _words("every daily always usually often most each")
_MONTHS = _words(
    "january february march april may june july august september october november december"
)
_PAST = (
    "used to",
    "grew up",
    "born and raised",
    "grew out",
    "as a kid",
    "as a child",
    "when i was",
    "until i",
    "my first",
    "very first",
    "previously",
    "student days",
    "back then",
    "at the time",
)
_PAST_UNTIL = re.compile(r"\buntil (?:last|recently|a (?:few|couple))\b")
"""A stated end in the past without a year ("until last spring"): no claim about now."""
_PAST_FRAME = re.compile(
    r"\bback in (?:the|my|our|those|uni|college|school|high school)\b"
    r"|\bas (?:a|an) (?:kid|child|teen|teenager|student|undergrad)\b"
)
"""A past state's frame without a year: "back in uni", "as a student" (life stages, a
closed class). Not "ago", which dates events as often ("broke up
two years ago"): see :func:`_time`."""
_YEAR = r"((?:19|20)\d\d)"
_MONTH = r"(?:(?:early|late|mid|end of)\s+)?(?:(?:" + "|".join(sorted(_MONTHS)) + r")\s+)?"
_YEAR_SPAN = re.compile(rf"\b{_MONTH}{_YEAR} (?:to|until|till|through|and) {_MONTH}{_YEAR}\b")
_YEAR_MARK = re.compile(
    rf"\b(since|until|till|through|throughout|before|after|in|during|by) {_MONTH}{_YEAR}\b"
)
_NOW = re.compile(r"\b(?:now|currently|nowadays|these days|at the moment|anymore|any more)\b")
NOW = math.inf
"""The present on a claim's time line (years): a claim without a time mark is about now."""
Interval = tuple[float, float]
PRESENT: Interval = (NOW, NOW)
SOME_PAST: Interval = (-math.inf, -math.inf)
"""An undated past ("used to", "as a kid"): it meets another undated past or a stated end
("until 2015"), not the present nor a dated year."""
_ADDITION = _words("also separately plus besides")
_ADDITION_PHRASES = ("as well", "its own", "their own", "her own", "his own", "another")
_CORRECTION = _words(
    "correct correction wrong mistake misspoke fix overstat scratch instead chang switch"
)
"""Stems that say the newer text corrects or changes something."""
_KIN = _words(
    "sister brother wife husband partner son daughter mum mom mother dad father parents "
    "friend neighbour neighbor cousin uncle aunt grandmother grandfather nephew niece "
    "girlfriend boyfriend kids colleague roommate flatmate housemate coworker grandma "
    "grandpa grandparents fiance fiancee spouse stepmom stepdad stepson stepdaughter boss "
    "landlord landlady teammate mate buddy pal"
)
_FIRST_PERSON = _words("i i'm i've i'd i'll me my mine we we're we've us our user user's")
"""The speaker; "User" / "User's" is the speaker of assistant-style memories ("User lives
in Denver", "User's son ...")."""
_POSSESSIVE = _words("my our his her their user's")
_SPEAKER_FIRST = _words("i i'm i've i'd i'll we we're we've user")
_DETERMINER = _POSSESSIVE | _words("the")
"""What may stand before a relative who is the subject: "my sister", "the neighbour's dog"."""
_THIRD_PERSON = _words("he she he's she's")
"""Subject pronouns of someone else: a piece that uses one and not the speaker's words is
about that one ("her" may be a pet's: "the salmon upset her stomach")."""
_AUXILIARIES = _words("is was has had 's")
_QUESTION_START = _words(
    "what which how when where who whom why do does did is are am was were can could "
    "should would will shall may"
)
_REPORTED_QUESTION = re.compile(
    r"(?:the )?(?:user|i|he|she|they)(?: also)? (?:asked|asks|wondered|wonders|wants to know|"
    r"was wondering|requested|requests)\b"
)
"""A question told by someone else ("User asked for movers in Austin"): it states nothing."""
_REQUEST_START = _words("please remind help find draft suggest let's")
_PLACE = _words("in to from near around")
_WEEKDAYS = _words("monday tuesday wednesday thursday friday saturday sunday")
_CALENDAR = _MONTHS | _WEEKDAYS | frozenset(d + "s" for d in _WEEKDAYS)
_ONES = "one two three four five six seven eight nine ten eleven twelve"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_NUMBER_WORDS = {w: i + 1 for i, w in enumerate(_ONES.split(" "))} | {
    w: 10 * (i + 2) for i, w in enumerate(_TENS.split(" "))
}
_SCALES = {"hundred": 100, "thousand": 1000}
STOP = _words(
    """a about above after again against all also am an and any anyone anything anyway are
    around as at be because been before being below between both but by can could did do
    does doing done down during each either else enough even ever every few for from get
    gets got had has have having he her here hers herself him himself his how however i
    i'd i'll i'm i've if in into is it it's its itself just least less let's many may me
    might mine more most much must my myself neither now of off often on once one only or
    other our ours ourselves out over own per quite rather really same she should so some
    something still such than that that's the their theirs them themselves then there
    these they this those though through thus to too under until up upon us very was we
    we're we've well were what what's when where whether which while who whom whose why
    will with within would yet you you're your yours yourself two three four five six seven
    eight nine ten eleven twelve twenty hundred thousand anymore longer honestly oh ok okay
    yes yeah hey please 's"""
)
"""Function words: never an attribute or a value."""


@dataclass(frozen=True, slots=True)
class Token:
    """A word of the text with its offsets; ``low`` is its lower-cased form."""

    text: str
    low: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Value:
    """A typed value: ``key`` compares values of one type (a number, a date, a name)."""

    type: ValueType
    key: str
    unit: str
    start: int
    end: int
    negated: bool
    context: frozenset[str] = frozenset()
    """Content-word stems right around the value: the attribute it is a value of."""
    clause: frozenset[str] = frozenset()
    """Content-word stems of the value's clause (between commas), the value itself left out."""
    place: str = ""
    """The preposition before a name that is a place ("in", "to", "from", "near")."""
    before: str = ""
    """The word before the value: its slot ("to" Munich, "is" Priya, "at" Siemens)."""
    names: frozenset[str] = frozenset()
    """Capitalised words of the value's clause: whose value it is ("Munich to Zurich")."""


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence-sized piece of a text, read as a claim (see module doc)."""

    start: int
    end: int
    words: frozenset[str]
    values: tuple[Value, ...]
    denied: frozenset[str]
    denied_verb: str
    dislikes: bool
    likes: bool
    affirmed_often: bool
    question: bool
    request: bool
    length: int
    """Tokens in the piece."""
    subject: str
    holder: tuple[str, ...]
    """Stems of the noun phrase the piece opens with after "my" / "User's" / "the" ("return
    flight" in "User's return flight is ..."): which of the subject's things it is about."""
    time: Interval
    """When the claim holds, in years from ``-inf`` to :data:`NOW` (see :func:`_time`)."""
    addition: bool
    corrects: bool

    @property
    def past(self) -> bool:
        """Whether the claim is about a time before now (marked: "used to", "until 2015")."""
        return self.time[1] < NOW

    @property
    def states(self) -> bool:
        """Whether the piece asserts anything beyond the values it presupposes."""
        return not (self.question or self.request)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem so "allergic"/"allergies", "kids"/"kid", "coffees"/"coffee" meet."""
    word = word.lower().replace("’", "'").removesuffix("'s")
    if len(word) <= 4:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    for suffix in ("ing", "ed", "ic", "s"):
        if len(word) - len(suffix) >= 4 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=4096)
def claims(text: str) -> tuple[Claim, ...]:
    """The claims of ``text``, in order (cached: a stored memory is judged many times)."""
    out = []
    start = 0
    for match in [*_PIECES.finditer(text), None]:
        end = match.start() if match else len(text)
        if text[start:end].strip():
            out.append(_claim(text, start, end))
        start = match.end() if match else end
    return tuple(out)


def _claim(text: str, start: int, end: int) -> Claim:
    piece = text[start:end]
    tokens = [
        Token(m.group(), m.group().lower().replace("’", "'"), start + m.start(), start + m.end())
        for m in _TOKEN.finditer(piece)
    ]
    lows = [t.low for t in tokens]
    lowered = " ".join(lows)
    negation = _negation_start(lows)
    values = [_situated(v, tokens, text) for v in _values(tokens, negation)]
    in_value = {
        i
        for i, t in enumerate(tokens)
        for v in values
        if v.start <= t.start < v.end and v.type in ("date", "time")
    }
    words = frozenset(
        stem(t.low)
        for i, t in enumerate(tokens)
        if i not in in_value and _content(t.low) and not t.low[0].isdigit()
    )
    denied, verb = _denied(text, tokens, negation)
    first = next((w for w in lows if w not in {"so", "and", "ok", "okay", "oh", "hey"}), "")
    question = piece.rstrip().endswith("?") or _REPORTED_QUESTION.match(lowered) is not None
    return Claim(
        start=start,
        end=end,
        words=words,
        values=tuple(values),
        denied=denied,
        denied_verb=verb,
        dislikes=negation is not None and lows[negation] in _DISLIKE,
        likes=bool(LIKE & set(lows)),
        affirmed_often=negation is None and bool(_FREQUENT & set(lows)),
        question=question,
        request=first in _REQUEST_START,
        length=len(tokens),
        subject=_subject(tokens),
        holder=_holder(lows),
        time=_time(lowered, first == "before"),
        addition=bool(_ADDITION & set(lows))
        or any(p in lowered for p in _ADDITION_PHRASES)
        or re.search(r"\btoo\W*$", piece) is not None,
        corrects=bool(_CORRECTION & {stem(w) for w in lows}),
    )


def _time(lowered: str, opens_before: bool) -> Interval:
    """When a piece holds, from its time marks (closed classes: prepositions before a year,
    tense markers): "from 2009 to 2014" is those years; "since 2016" runs to now, and so
    does "in 2019" (what happened then, "moved out in 2017", "died in 2015", still holds:
    a year alone does not tell a past state from an event); "until 2015" / "before 2018"
    end then; "used to", "as a kid", "back in uni" are an undated past; no mark, or "now"
    / "currently", is the present. Two claims meet only when their intervals do
    (``claim_terms._other_times``): "lived in Manila until 2015" / "has lived in Toronto
    since 2016" do not, "vegetarian since 2010" / "had wings in 2014" do."""
    span = _YEAR_SPAN.search(lowered)
    if span:
        return float(span.group(1)), float(span.group(2))
    start, end = -math.inf, NOW
    dated = False
    for mark, year in ((m.group(1), float(m.group(2))) for m in _YEAR_MARK.finditer(lowered)):
        dated = True
        if mark in ("since", "in", "during", "throughout"):
            start = max(start, year)
        elif mark == "after":
            start = max(start, year + 1)
        elif mark in ("until", "till", "through", "by"):
            end = min(end, year)
        elif mark == "before":
            end = min(end, year - 1)
    if dated:
        return (start, end) if start <= end else (end, start)
    if _NOW.search(lowered):
        return PRESENT
    past = (
        opens_before
        or any(re.search(rf"\b{m}\b", lowered) for m in _PAST)
        or _PAST_UNTIL.search(lowered) is not None
        or _PAST_FRAME.search(lowered) is not None
    )
    return SOME_PAST if past else PRESENT


def _content(low: str) -> bool:
    return low not in STOP and len(low) > 2 and not _negator(low)


def _negator(low: str) -> bool:
    return low in NEGATORS or low.endswith("n't")


def _denied(text: str, tokens: list[Token], negation: int | None) -> tuple[frozenset[str], str]:
    """Content words in the scope of a negation, and the verb a "not"/"never" negates
    ("drink" in "never drink coffee").

    The scope ends at the next comma; after "rather than" / "instead of" it starts at what
    is rejected; after a change ("switched from X to Y") it also ends at "to"/"with"/"for".
    """
    if negation is None:
        return frozenset(), ""
    opener = tokens[negation].low
    start = negation + 1
    if opener in _ALTERNATIVES:
        if start >= len(tokens) or tokens[start].low not in {"than", "of"}:
            return frozenset(), ""
        start += 1
    comma = text.find(",", tokens[negation].end)
    scope: list[str] = []
    for token in tokens[start:]:
        if comma >= 0 and token.start > comma:
            break
        if opener in _ENDS and token.low in {"to", "with", "for"} and scope:
            break
        if _content(token.low) and token.low.isalpha() and token.low not in _CALENDAR:
            scope.append(stem(token.low))
    verb = scope[0] if scope and opener not in _ENDS and len(scope) > 1 else ""
    return frozenset(scope), verb


def _negation_start(lows: list[str]) -> int | None:
    for i, low in enumerate(lows):
        if low in _ALTERNATIVES and lows[i + 1 : i + 2] not in (["than"], ["of"]):
            continue  # "I'll take the train instead": nothing named is rejected
        if _negator(low) or low in _ENDS:
            return i
    return None


def _subject(tokens: list[Token]) -> str:
    """Whom the piece is about: a relative ("my brother ...", "the neighbour's dog ..."),
    someone named ("Priya's own boss ...", "Priya lives ..."), the speaker (``"i"``),
    someone else spoken of ("he" / "she" in a piece without the speaker), or nobody in
    particular (``""``)."""
    for i, token in enumerate(tokens[:5]):
        if token.low in _SPEAKER_FIRST or token.low in _AUXILIARIES:
            break  # "I play with my kids", "Priya is my boss": the speaker's claim
        if token.low in _DETERMINER and i + 1 < len(tokens):
            # "my brother", "User's son", "my older brother", "my best friend's"
            for j in range(i + 1, min(i + 3, len(tokens))):
                if tokens[j].low.removesuffix("'s") in _KIN:
                    if _named(tokens, j):
                        break  # "my boss is Daniel Okafor": the speaker's boss, named
                    return _possessor(tokens, j)  # "sister", or "sister's" for what is hers
            if token.low in _POSSESSIVE:
                break
            continue
        if (
            token.low.endswith("'s")
            and token.text[0].isupper()
            and token.low[:-2] not in STOP
            and token.low not in _FIRST_PERSON
        ):
            return _possessor(tokens, i)
    if any(t.low in _FIRST_PERSON for t in tokens):
        return "i"
    if tokens and _is_name(tokens, 0) and _third_person_verb([t.low for t in tokens[1:3]]):
        return tokens[0].low  # "Priya lives in Austin", "Hana is a GP"
    if any(t.low in _THIRD_PERSON for t in tokens):
        return SOMEONE  # "hana lives on coffee, she has one between every patient"
    return ""


def _named(tokens: list[Token], i: int) -> bool:
    """Whether ``tokens[i]`` (a relative) is named by what follows: "my boss is Daniel"."""
    rest = tokens[i + 1 : i + 3]
    return len(rest) == 2 and rest[0].low in _AUXILIARIES and _is_name(tokens, i + 2)


def _third_person_verb(following: list[str]) -> bool:
    """Whether the words after a name open its predicate: an auxiliary ("Hana is ..."), or
    a word in "-s" before a function word ("Priya lives in ...", not "Invoice terms
    changed ...")."""
    if not following:
        return False
    verb = following[0]
    if verb in _AUXILIARIES:
        return True
    return (
        verb.endswith("s")
        and not verb.endswith("ss")
        and verb not in STOP
        and following[1:2] != []
        and following[1] in STOP
    )


def _holder(lows: list[str]) -> tuple[str, ...]:
    """The content words (stems, at most three) after a determiner among the first two
    tokens, up to the first function word: "my older brother", "User's return flight"."""
    for i, low in enumerate(lows[:2]):
        if low in _DETERMINER:
            words = []
            for following in lows[i + 1 : i + 4]:
                if following in STOP or not following.isalpha():
                    break
                words.append(stem(following))
            return tuple(words)
    return ()


def _possessor(tokens: list[Token], i: int) -> str:
    """``tokens[i]`` as a subject: "brother's" for what is his ("my brother's flat"), but
    "brother" where "'s" is "is" / "has" ("my brother's been a plumber", "amira's a
    chef"): a function word, a participle or nothing follows."""
    low = tokens[i].low
    following = tokens[i + 1].low if i + 1 < len(tokens) else ""
    if low.endswith("'s") and (
        not following
        or following in STOP
        or following.endswith(("ing", "ed"))
        or following == "got"
    ):
        return low[:-2]
    return low


def _situated(value: Value, tokens: list[Token], text: str) -> Value:
    """``value`` with the words around it (three tokens, and its comma-delimited clause)
    and the preposition that makes it a place."""
    first = next(i for i, t in enumerate(tokens) if t.start >= value.start)
    last = max(i for i, t in enumerate(tokens) if t.end <= value.end)
    near = tokens[max(first - 3, 0) : first] + tokens[last + 1 : last + 4]
    context = frozenset(
        stem(t.low) for t in near if _content(t.low) and t.text[0].islower() and t.low.isalpha()
    )
    clause_start = text.rfind(",", 0, value.start)
    clause_end = text.find(",", value.end)
    clause = frozenset(
        stem(t.low)
        for t in tokens[:first] + tokens[last + 1 :]
        if t.start > clause_start
        and (clause_end < 0 or t.end <= clause_end)
        and _content(t.low)
        and t.low.isalpha()
    )
    names = frozenset(
        t.low
        for t in tokens[:first] + tokens[last + 1 :]
        if t.start > clause_start
        and (clause_end < 0 or t.end <= clause_end)
        and t.text[0].isupper()
        and t.low not in STOP
    )
    before = tokens[first - 1].low if first > 0 else ""
    place = before if value.type == "name" and before in _PLACE else ""
    return replace(
        value,
        context=context - {value.unit},
        clause=clause - {value.unit},
        place=place,
        before=before,
        names=names,
    )


def _values(tokens: list[Token], negation: int | None) -> list[Value]:
    out: list[Value] = []
    i = 0
    while i < len(tokens):
        negated = negation is not None and i > negation
        step, value = _date_or_time(tokens, i, negated)
        if value is None:
            step, value = _number(tokens, i, negated)
        if value is None and _is_name(tokens, i):
            j = i + 1
            while j < len(tokens) and _is_name(tokens, j, inner=True):
                j += 1
            key = " ".join(t.low for t in tokens[i:j])
            value = Value("name", key, "", tokens[i].start, tokens[j - 1].end, negated)
            step = j - i
        if value is not None:
            out.append(value)
        i += max(step, 1)
    return out


def _number(tokens: list[Token], i: int, negated: bool) -> tuple[int, Value | None]:
    low = tokens[i].low
    amount: float | None = None
    j = i + 1
    if low[0].isdigit():
        digits = low.rstrip(".").replace(",", "")
        scale = 1000 if digits.endswith("k") else 1
        try:
            amount = float(digits.rstrip("k")) * scale
        except ValueError:
            return 1, None
    elif low.split("-")[0] in _NUMBER_WORDS:
        amount = float(sum(_NUMBER_WORDS.get(part, 0) for part in low.split("-")))
    if amount is None:
        return 1, None
    while j < len(tokens) and tokens[j].low in _SCALES:
        amount *= _SCALES[tokens[j].low]
        j += 1
    if [t.low for t in tokens[j : j + 3]] == ["and", "a", "half"]:
        amount, j = amount + 0.5, j + 3
    unit = ""
    if j < len(tokens) and tokens[j].low.isalpha() and tokens[j].low not in STOP:
        unit = stem(tokens[j].low)
        j += 1
    end = tokens[j - 1].end
    return j - i, Value("number", f"{amount:g}", unit, tokens[i].start, end, negated)


def _day(low: str) -> str | None:
    digits = low.removesuffix("st").removesuffix("nd").removesuffix("rd").removesuffix("th")
    return digits if digits.isascii() and digits.isdigit() and 1 <= int(digits) <= 31 else None


def _date_or_time(tokens: list[Token], i: int, negated: bool) -> tuple[int, Value | None]:
    """Clock times, weekdays, and dates as ``month-day`` (either part may be empty)."""
    token = tokens[i]
    low = token.low
    if low[0].isdigit() and (":" in low or low.endswith(("am", "pm"))):
        return 1, Value("time", _clock_key(low), "", token.start, token.end, negated)
    if low.removesuffix("s") in _WEEKDAYS:
        return 1, Value("date", low.removesuffix("s"), "", token.start, token.end, negated)
    following = [t.low for t in tokens[i + 1 : i + 3]]
    if low in _MONTHS:
        day = _day(following[0]) if following else None
        step = 2 if day else 1
        key = f"{low}-{day or ''}"
        return step, Value("date", key, "", token.start, tokens[i + step - 1].end, negated)
    day = _day(low)
    if day is None or not (
        low.endswith(("st", "nd", "rd", "th"))
        or following[:1] == ["of"]
        or (following[:1] and following[0] in _MONTHS)
    ):
        return 1, None
    if following[:1] == ["of"] and following[1:] and following[1] in _MONTHS:
        month, step = following[1], 3
    elif following[:1] and following[0] in _MONTHS:
        month, step = following[0], 2
    else:
        month, step = "", 1
    end = tokens[i + step - 1].end
    return step, Value("date", f"{month}-{day}", "", token.start, end, negated)


def _clock_key(low: str) -> str:
    """One key per clock time, so "18:30", "6:30 pm" and "6:30pm" meet: hours and minutes,
    on the 24-hour clock when "am" / "pm" says which half of the day ("6:30" alone stays
    6:30)."""
    half = low[-2:] if low.endswith(("am", "pm")) else ""
    hours, _, minutes = low.removesuffix(half).strip().partition(":")
    hour = int(hours) % 12 + (12 if half == "pm" else 0) if half else int(hours)
    return f"{hour}:{int(minutes or 0):02d}"


def _is_name(tokens: list[Token], i: int, *, inner: bool = False) -> bool:
    """A capitalised word that is not a sentence opener, "I", or a calendar word."""
    token = tokens[i]
    base = token.low.removesuffix("'s")
    if not token.text[0].isupper() or base in STOP or base in _CALENDAR:
        return False
    if token.low in _FIRST_PERSON or base == "user":
        return False
    if inner or i > 0:
        return True
    return not is_common_word(token.low)  # "Green has ...", "So Munich ...": ordinary words
