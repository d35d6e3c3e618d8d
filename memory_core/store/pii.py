"""A scrubber for personal data in logged text: e-mails, phone numbers, card numbers, IBANs.

Regexes find candidates; checksums (Luhn for cards, mod 97 for IBANs) keep ordinary
long numbers such as order ids from being blanked. Phone numbers have no checksum, so
only shapes that are clearly phone numbers match: a leading ``+``, an area code in
parentheses, or 9 to 15 digits in separated groups. Dates and short numbers are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memory_core.errors import InputError

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,5}(?:[ .-]\d{2,8}){0,5}(?![\w-])"
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}[./-]\d{2}[./-]\d{4}")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616 mod-97 check."""
    iban = candidate.replace(" ", "")
    if not 15 <= len(iban) <= 34:
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _card(match: re.Match[str]) -> str | None:
    digits = re.sub(r"\D", "", match.group())
    return "[CARD]" if luhn_valid(digits) else None


def _iban(match: re.Match[str]) -> str | None:
    return "[IBAN]" if iban_valid(match.group()) else None


def _email(match: re.Match[str]) -> str | None:
    return "[EMAIL]"


def _phone(match: re.Match[str]) -> str | None:
    text = match.group()
    digits = sum(ch.isdigit() for ch in text)
    if not 7 <= digits <= 15 or _DATE.fullmatch(text):
        return None
    grouped = any(sep in text for sep in " .-")
    if text.startswith("+") or "(" in text or (grouped and digits >= 9):
        return "[PHONE]"
    return None


Replacer = Callable[[re.Match[str]], "str | None"]


def _substitute(pattern: re.Pattern[str], replace: Replacer, text: str) -> str:
    return pattern.sub(lambda m: replace(m) or m.group(), text)


# order matters: cards and IBANs first, so their digits are not taken for phone numbers
DETECTORS: Mapping[str, tuple[re.Pattern[str], Replacer]] = {
    "card": (_CARD, _card),
    "iban": (_IBAN, _iban),
    "email": (_EMAIL, _email),
    "phone": (_PHONE, _phone),
}
DEFAULT_KINDS = ("card", "email", "phone")


@dataclass(frozen=True, slots=True)
class PiiScrubber:
    """Replaces personal data with ``[EMAIL]``, ``[PHONE]``, ``[CARD]``, ``[IBAN]``."""

    kinds: tuple[str, ...] = DEFAULT_KINDS

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in DETECTORS]
        if unknown or not self.kinds:
            raise InputError("kinds", f"{unknown or '()'} invalid; allowed: {', '.join(DETECTORS)}")

    def scrub(self, text: str) -> str:
        for kind in DETECTORS:
            if kind in self.kinds:
                text = _substitute(*DETECTORS[kind], text)
        return text

    def scrub_value(self, value: Any) -> Any:
        """Scrub every string inside JSON-like data (dict keys are left as they are)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {k: self.scrub_value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrub_value(v) for v in value]
        return value
