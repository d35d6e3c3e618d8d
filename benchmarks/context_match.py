"""How an expected value is found in a node of a printed context graph.

A builder may write "180 EUR per night", "€180/night" or "a hundred and eighty euros a
night"; a person reads all three as the same limit. So an expected value with a ``number``
matches a text that holds that number (number words become digits through ``text2num``,
``40k`` and ``ten grand`` are thousands, ``1,200`` is 1200) written with the same unit after
normalisation (``€``, ``eur``, ``euros`` are all ``EUR``) or with no unit of its family.
Units are those written next to the number: a currency sign or code before it, up to two
unit words or signs after it; a number whose units are all of other families still matches
(``1600/mo`` is the 1600 USD rent ceiling, ``party of 6`` is 6 people). A value without a number matches when its words, or one alias's words, appear in order in the
text (case, accents, plurals, "the", ordinal suffixes and punctuation ignored, so ``the 14th``
matches ``14 May`` and ``Tuesdays`` matches ``Tuesday``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from text_to_num import alpha2digit

from memory_core.errors import InputError

UNITS = {
    "EUR": ("eur", "euro", "euros"),
    "USD": ("usd", "dollar", "dollars", "buck", "bucks"),
    "GBP": ("gbp", "pound", "pounds", "quid"),
    "JPY": ("jpy", "yen"),
    "CNY": ("cny", "yuan", "rmb"),
    "CHF": ("chf", "franc", "francs"),
    "people": (
        "people",
        "person",
        "persons",
        "guest",
        "guests",
        "pax",
        "adult",
        "adults",
        "diner",
        "diners",
        "attendee",
        "attendees",
    ),
    "night": ("night", "nights"),
    "day": ("day", "days"),
    "week": ("week", "weeks"),
    "month": ("month", "months", "mo"),
    "year": ("year", "years", "yr"),
    "hour": ("hour", "hours", "hr", "hrs", "h"),
    "minute": ("minute", "minutes", "min", "mins"),
    "GB": ("gb",),
    "TB": ("tb",),
    "inch": ("inch", "inches"),
    "sqm": ("sqm",),
    "mile": ("mile", "miles", "mi"),
    "km": ("km",),
    "kg": ("kg",),
    "box": ("box", "boxes"),
    "session": ("session", "sessions"),
    "seat": ("seat", "seats"),
    "bedroom": ("bedroom", "bedrooms", "br", "bd", "bed", "beds"),
    "room": ("room", "rooms"),
    "recipe": ("recipe", "recipes"),
    "ticket": ("ticket", "tickets", "tix"),
}
_UNIT_OF = {word: unit for unit, words in UNITS.items() for word in (unit.lower(), *words)}
_FAMILY = {
    unit: family
    for family, units in (
        ("currency", ("EUR", "USD", "GBP", "JPY", "CNY", "CHF")),
        ("time", ("night", "day", "week", "month", "year", "hour", "minute")),
        ("measure", ("GB", "TB", "inch", "sqm", "mile", "km", "kg")),
        ("count", ("people", "box", "session", "seat", "bedroom", "room", "recipe", "ticket")),
    )
    for unit in units
}
_SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY"}
#: attribute keys that say whose constraint it is; a value other than the user makes it
#: someone else's ("my colleague's limit is 300" may be kept, but not as mine)
OWNER_KEYS = ("owner", "holder", "person", "belongs_to", "subject", "who")
USER_NAMES = frozenset({"user", "me", "i", "myself", "self", "you"})
#: words that mark a kept node as cancelled rather than wanted ("sports add-on: cancelled")
CANCEL_MARKERS = frozenset(
    {"cancel", "cancelled", "canceled", "cancellation", "removed", "remove", "withdrawn",
     "withdraw", "dropped", "drop", "no", "not", "without", "none"}
)  # fmt: skip
#: attribute keys that hold provenance, not content (their numbers must not match values)
PROVENANCE_KEYS = frozenset(
    {"id", "ids", "turns", "turn_ids", "memories", "memory_ids", "provenance", "source",
     "sources", "created_at", "updated_at", "valid_at", "invalid_at", "expired_at", "at",
     "version", "hash"}
)  # fmt: skip


def _digits(text: str) -> str:
    """Lower-cased, accent-free text with numbers written as plain digits."""
    text = unicodedata.normalize("NFKC", text).replace("m²", " sqm ")
    text = "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
    ).casefold()
    text = alpha2digit(text, "en", threshold=0)
    text = re.sub(r"\bsquare met(?:re|er)s?\b|\bm2\b", " sqm ", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return re.sub(
        r"(\d+(?:\.\d+)?)\s*(?:k|grand)\b", lambda m: f"{float(m.group(1)) * 1000:g}", text
    )


def _fold(token: str) -> str:
    return (
        token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token
    )


@dataclass(frozen=True, slots=True)
class Text:
    """A text prepared once: its folded words, and each number with the units written next to it."""

    tokens: tuple[str, ...]
    quantities: frozenset[tuple[float, frozenset[str]]]

    @classmethod
    def of(cls, text: str) -> Text:
        spaced = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", _digits(text))
        spaced = re.sub(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)", " ", spaced)
        clockless = re.sub(r"\d+(?:[:/]\d+)+", " ", spaced)  # 4:30 and 3/2/1988 are no quantities
        stream = re.findall(r"[€$£¥]|(?<![\d.])\d+(?:\.\d+)?|[a-z]+", clockless)
        quantities = set()
        for i, token in enumerate(stream):
            if not token[0].isdigit():
                continue
            units = set()
            if i and (
                stream[i - 1] in _SYMBOLS
                or _FAMILY.get(_UNIT_OF.get(stream[i - 1], "")) == "currency"
            ):
                units.add(_SYMBOLS.get(stream[i - 1]) or _UNIT_OF[stream[i - 1]])
            for after in stream[i + 1 : i + 3]:  # "180 EUR per night", "62 sqm", "1,150 € warm"
                unit = _SYMBOLS.get(after) or _UNIT_OF.get(after)
                if unit is None:
                    break
                units.add(unit)
            quantities.add((float(token), frozenset(units)))
        words = [w for w in re.findall(r"[a-z0-9]+", spaced) if w != "the"]
        return cls(tuple(_fold(w) for w in words), frozenset(quantities))

    def holds(self, tokens: tuple[str, ...]) -> bool:
        n = len(tokens)
        return n > 0 and any(
            self.tokens[i : i + n] == tokens for i in range(len(self.tokens) - n + 1)
        )


@dataclass(frozen=True, slots=True)
class Value:
    """An expected value: a text with aliases, or a number with an optional unit."""

    text: str
    number: float | None = None
    unit: str | None = None
    aliases: tuple[str, ...] = ()
    slot: str = ""
    _phrases: tuple[tuple[str, ...], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        phrases = tuple(Text.of(t).tokens for t in (self.text, *self.aliases))
        object.__setattr__(self, "_phrases", tuple(p for p in phrases if p))

    @classmethod
    def parse(cls, item: Any, where: str, *, needs_slot: bool = False) -> Value:
        """A string or ``{"value", "number"?, "unit"?, "aliases"?, "slot"?}``; clear errors otherwise."""
        if isinstance(item, str) and item.strip() and not needs_slot:
            return cls(item)
        if not isinstance(item, Mapping) or not isinstance(item.get("value"), str):
            raise InputError(
                where, "needs a string 'value'" + (" and 'slot'" if needs_slot else "")
            )
        if needs_slot and not (isinstance(item.get("slot"), str) and item["slot"].strip()):
            raise InputError(f"{where}.slot", "must be a non-blank string")
        number = item.get("number")
        if number is not None and (
            isinstance(number, bool) or not isinstance(number, (int, float))
        ):
            raise InputError(f"{where}.number", f"{number!r} is not a number")
        unit = item.get("unit")
        if unit is not None and str(unit).lower() not in _UNIT_OF:
            raise InputError(f"{where}.unit", f"{unit!r}; allowed: {', '.join(UNITS)}")
        aliases = item.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InputError(f"{where}.aliases", "must be a list of strings")
        return cls(
            item["value"],
            None if number is None else float(number),
            None if unit is None else _UNIT_OF[str(unit).lower()],
            tuple(aliases),
            str(item.get("slot", "")),
        )

    def _unit_fits(self, units: frozenset[str]) -> bool:
        """The same unit, or none of its family: "1600/mo" may be the 1600 USD rent ceiling."""
        if self.unit is None or self.unit in units:
            return True
        return all(_FAMILY[unit] != _FAMILY[self.unit] for unit in units)

    def matches(self, text: Text) -> bool:
        if self.number is not None:
            return any(
                abs(n - self.number) <= 1e-6 * max(1.0, abs(self.number)) and self._unit_fits(units)
                for n, units in text.quantities
            )
        return any(text.holds(phrase) for phrase in self._phrases)


def _flatten(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [
            s
            for k, v in value.items()
            if str(k).lower() not in PROVENANCE_KEYS
            for s in _flatten(v)
        ]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _flatten(v)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


@dataclass(slots=True)
class NodeView:
    """One printed node: its state flags, its label alone and label plus attributes as text."""

    id: str
    type: str
    label: Text
    text: Text
    attributes: Mapping[str, Any]
    deprecated: bool
    soft_deleted: bool
    retired: bool = False  # every SATISFIES edge of it is deprecated

    @classmethod
    def of(cls, node: Mapping[str, Any]) -> NodeView:
        attributes = node.get("attributes") or {}
        label = str(node.get("label", ""))
        return cls(
            id=str(node.get("id")),
            type=str(node["type"]),
            label=Text.of(label),
            text=Text.of(" ; ".join([label, *_flatten(attributes)])),
            attributes=attributes if isinstance(attributes, Mapping) else {},
            deprecated=bool(node.get("deprecated", False)),
            soft_deleted=bool(node.get("soft_deleted", False)),
        )

    @property
    def active(self) -> bool:
        return not (self.deprecated or self.soft_deleted or self.retired)


def has_marker(text: Text) -> bool:
    """The node says the thing is cancelled, removed or not wanted."""
    return any(token in CANCEL_MARKERS for token in text.tokens)


def is_someone_elses(attributes: Mapping[str, Any]) -> bool:
    """The node's attributes name an owner other than the user."""
    for key in OWNER_KEYS:
        owner = attributes.get(key)
        if isinstance(owner, str) and owner.strip() and owner.strip().casefold() not in USER_NAMES:
            return True
    return False
