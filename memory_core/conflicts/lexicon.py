"""Word lists the rule judge reads: cues, sentiment, value slots and topic classes.

Everything is lower case. Multi-word entries are tuples of tokens as produced by
:mod:`memory_core.conflicts.features` (contractions are split, so "don't" is ``do not``
and "can't" is ``can not``). Lists are deliberately general English, not tuned to any
one conversation; extend them rather than adding special cases to the rules.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS: frozenset[str] = _words("""
    a an the and or but so if then than that this these those there here it its it's
    i me my mine myself we us our ours you your yours he him his she her hers they them
    their theirs who whom which what when where why how
    is am are was were be been being do does did doing done have has had having
    will would shall should can could may might must ca wo
    to of in on at by for from with about into onto over under up down out off as per
    again also too very really just only still even already ever some any each every all
    both either neither such own same other another more most much many few lot lots
    please make let get got gets give given me s d ll ve re m t
    next last this tomorrow today tonight yesterday usually often always sometimes
    one's via around about like
    probably maybe perhaps honestly finally definitely literally basically quite pretty
    """)
"""Function words ignored when comparing topics. "like" is handled as sentiment first."""

NEGATIONS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("not",),
        ("never",),
        ("no",),
        ("none",),
        ("nothing",),
        ("out", "of", "service"),
        ("out", "of", "order"),
        ("offline",),
        ("finished",),
        ("leaving",),
        ("nobody",),
        ("nowhere",),
        ("neither",),
        ("nor",),
        ("without",),
    }
)

STATE_NEGATIONS: frozenset[str] = frozenset(
    {"out of service", "out of order", "offline", "finished", "sold"}
)
"""Negations that follow what they negate ("P3 is out of service")."""

IDIOMS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("no", "idea"),
        ("no", "problem"),
        ("no", "worries"),
        ("no", "way"),
        ("never", "mind"),
        ("not", "sure"),
        ("not", "bad"),
        ("no", "rush"),
        ("no", "doubt"),
        ("not", "the", "best"),
    }
)
"""Phrases whose negation word negates nothing; matched first so they are ignored."""

CESSATIONS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("stopped",),
        ("stop",),
        ("quit",),
        ("gave", "up"),
        ("given", "up"),
        ("giving", "up"),
        ("sold",),
        ("moved", "out"),
        ("moving", "out"),
        ("got", "rid", "of"),
        ("give", "up"),
        ("cancel",),
        ("cancelled",),
        ("canceled",),
        ("dropped",),
        ("ditched",),
        ("abandoned",),
    }
)
"""Verbs that end a previous state; they negate it and also mark a correction."""

CLAUSE_INITIAL: frozenset[str] = frozenset({"actually"})
"""Cues that correct only when they open a clause ("Actually, ..."), not mid-sentence."""

CORRECTIONS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("actually",),
        ("instead",),
        ("correction",),
        ("anymore",),
        ("any", "more"),
        ("no", "longer"),
        ("no", "more"),
        ("back", "in", "service"),
        ("back", "online"),
        ("not", "anymore"),
        ("changed", "my", "mind"),
        ("change", "of", "plans"),
        ("scratch", "that"),
        ("switched",),
        ("migrated",),
        ("moved", "on"),
        ("moved", "from"),
        ("replaced",),
        ("on", "second", "thought"),
        ("i", "was", "wrong"),
        ("turns", "out"),
        ("in", "fact"),
        ("from", "now", "on"),
        ("change", "it"),
    }
)
"""Explicit "what I said before is no longer true" cues."""

CHANGES: frozenset[tuple[str, ...]] = frozenset(
    {
        ("now",),
        ("moved",),
        ("changed",),
        ("pushed",),
        ("postponed",),
        ("rescheduled",),
        ("raised",),
        ("lowered",),
        ("increased",),
        ("decreased",),
        ("reduced",),
        ("went", "up"),
        ("went", "down"),
        ("updated",),
        ("new",),
        ("only",),
        ("took", "over"),
        ("these", "days"),
    }
)
"""Cues that a value was updated; they strengthen a value change but prove nothing alone."""

ADDITIONS: frozenset[tuple[str, ...]] = frozenset(
    {("also",), ("too",), ("as", "well"), ("either",), ("additionally",), ("besides",)}
)
"""Cues that a statement adds to an earlier one rather than replacing it."""

SENTIMENT: dict[tuple[str, ...], int] = {
    ("like",): 1,
    ("likes",): 1,
    ("love",): 1,
    ("loves",): 1,
    ("adore",): 1,
    ("enjoy",): 1,
    ("enjoys",): 1,
    ("prefer",): 1,
    ("prefers",): 1,
    ("favourite",): 1,
    ("favorite",): 1,
    ("fan",): 1,
    ("fond",): 1,
    ("preferred",): 1,
    ("fine", "with"): 1,
    ("happy", "with"): 1,
    ("ok", "with"): 1,
    ("great",): 1,
    ("awesome",): 1,
    ("amazing",): 1,
    ("excellent",): 1,
    ("wonderful",): 1,
    ("delicious",): 1,
    ("fun",): 1,
    ("easy",): 1,
    ("hate",): -1,
    ("hates",): -1,
    ("dislike",): -1,
    ("dislikes",): -1,
    ("detest",): -1,
    ("loathe",): -1,
    ("avoid",): -1,
    ("avoids",): -1,
    ("can", "not", "stand"): -1,
    ("cannot", "stand"): -1,
    ("not", "stand"): -1,
    ("sick", "of"): -1,
    ("tired", "of"): -1,
    ("fed", "up"): -1,
    ("terrible",): -1,
    ("awful",): -1,
    ("horrible",): -1,
    ("boring",): -1,
    ("annoying",): -1,
    ("disgusting",): -1,
    ("bitter",): -1,
    ("too", "hard"): -1,
    ("too", "difficult"): -1,
    ("too", "slow"): -1,
    ("too", "expensive"): -1,
    ("worst",): -1,
    ("refuse",): -1,
    ("refuses",): -1,
    ("clunky",): -1,
    ("painful",): -1,
    ("frustrating",): -1,
    ("overrated",): -1,
}
"""Preference and evaluation cues with their sign; matched before negation."""

SLOTS: dict[str, frozenset[str]] = {
    "transport": _words(
        "flight flights fly flying plane airplane train trains rail railway bus coach car "
        "drive driving taxi cab ferry boat bike bicycle cycle cycling walk walking"
    ),
    "seat": _words("aisle window middle"),
    "display": _words("dark light"),
    "diet": _words("vegetarian vegan pescatarian meat"),
    "os": _words("linux windows macos mac ubuntu"),
    "temperature": _words("hot cold warm iced"),
}
"""Words that fill one exclusive slot: two different members mean two different choices."""

SYNONYMS: dict[str, str] = {
    "flight": "fly",
    "flights": "fly",
    "flying": "fly",
    "plane": "fly",
    "airplane": "fly",
    "railway": "train",
    "rail": "train",
    "trains": "train",
    "bicycle": "bike",
    "cycle": "bike",
    "cycling": "bike",
    "driving": "car",
    "drive": "car",
    "film": "movie",
    "films": "movie",
    "mac": "macos",
    "allergies": "allergic",
    "allergy": "allergic",
    "favorite": "favourite",
    "deployments": "deploy",
    "deployment": "deploy",
    "monthly": "month",
    "weekly": "week",
    "nightly": "night",
}
"""Spelling and inflection variants folded before words are compared."""

HYPERNYMS: dict[str, str] = {
    "wine": "alcohol",
    "beer": "alcohol",
    "whisky": "alcohol",
    "whiskey": "alcohol",
    "vodka": "alcohol",
    "gin": "alcohol",
    "rum": "alcohol",
    "cocktail": "alcohol",
    "cocktails": "alcohol",
    "cigarette": "smoke",
    "cigarettes": "smoke",
    "smoking": "smoke",
    "cat": "pet",
    "cats": "pet",
    "dog": "pet",
    "dogs": "pet",
}
"""A word also stands for its broader class: "no alcohol" is about wine too."""

TOPICS: dict[str, frozenset[str]] = {
    "food": _words("""food eat eating ate meal meals dish dishes dinner lunch breakfast brunch snack
        cook cooking recipe restaurant pizza pasta sushi ramen curry salad soup rice bread
        cheese meat chicken beef pork fish vegetarian vegan spicy sweet dessert cake fruit
        mushroom risotto tea coffee drink drinks milk juice beer wine water cuisine taste
        peanuts shellfish"""),
    "travel": _words("""travel travelling traveling trip trips flight fly flying plane airport train rail
        bus hotel booking book booked seat seats aisle window luggage visa passport holiday
        holidays vacation tour journey ticket tickets car rental ferry traffic commute rush"""),
    "coding": _words("""code coding programming language python java rust golang javascript typescript
        editor ide vim emacs neovim compiler library framework api repo git commit branch
        pytest tests test bug debug backend frontend database sql postgresql mysql redis
        linux macos"""),
    "health": _words("""health allergic allergy allergies doctor dentist medicine medication pill
        symptom sick ill pain headache sleep diet exercise gym workout running run marathon swim swimming yoga
        hiking weight vegetarian vegan"""),
    "schedule": _words("""meeting meetings standup appointment deadline schedule scheduled calendar
        reservation release review call conference event agenda due"""),
    "money": _words("""budget money cost costs price prices rent salary pay paid payment invoice bill
        expensive cheap euros dollars pounds spend spent spending saving savings bank loan tax taxes"""),
    "people": _words("""sister brother mother father mom dad son daughter wife husband partner friend
        friends boss manager colleague lead team kids children family"""),
    "games": _words("""game games gaming play playing chess minecraft zelda tetris roblox console
        xbox playstation puzzle board nintendo"""),
    "monitoring": _words("""alert alerts alerting threshold dashboard dashboards cpu memory disk latency
        uptime metrics monitoring grafana prometheus server servers backup backups deploy
        production incident error errors logs"""),
    "media": _words("""music song songs jazz rock band concert movie movies film films series show
        book books novel podcast horror comedy scary
        guitar piano drums violin cello instrument singing"""),
    "weather": _words(
        """weather cold hot warm rain snow sunny winter winters summer autumn spring
        temperature humid wind storm"""
    ),
}
"""Coarse topic classes: two texts touching the same class are about related things."""

NUMBER_WORDS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "fifty": 50,
    "hundred": 100,
}

WEEKDAYS: frozenset[str] = _words(
    "monday tuesday wednesday thursday friday saturday sunday weekend weekday"
)

GENERIC: frozenset[str] = _words(
    """second minute hour day week month year time k km mile kg lb gb mb tb ms percent
    bar"""
)
"""Units of measure: sharing only these does not make two texts one attribute."""

TIMES: frozenset[str] = frozenset({"noon", "midnight", "midday"})
"""Named times of day that compare with clock times."""

MONTHS: frozenset[str] = (
    _words("""january february march april may june july august september october november
    december""")
)

CURRENCIES: dict[str, str] = {
    "$": "money",
    "€": "money",
    "£": "money",
    "dollar": "money",
    "dollars": "money",
    "usd": "money",
    "euro": "money",
    "euros": "money",
    "eur": "money",
    "pound": "money",
    "pounds": "money",
    "gbp": "money",
    "k": "money",
}
"""Units that make a number an amount of money; amounts compare with each other."""
