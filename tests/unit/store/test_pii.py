"""The PII scrubber blanks personal data and leaves ordinary numbers alone."""

from __future__ import annotations

import pytest

from memory_core.errors import InputError
from memory_core.store.pii import PiiScrubber, iban_valid, luhn_valid

ALL = PiiScrubber(("card", "iban", "email", "phone"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to john.doe+x@mail.example.co.uk today", "write to [EMAIL] today"),
        ("call +1 (415) 555-2671 now", "call [PHONE] now"),
        ("Tel. +44 20 7946 0958.", "Tel. [PHONE]."),
        ("office 030 1234567", "office [PHONE]"),
        ("desk 415-555-2671", "desk [PHONE]"),
        ("pay with 4111 1111 1111 1111 please", "pay with [CARD] please"),
        ("card 5500-0000-0000-0004", "card [CARD]"),
        ("IBAN DE89 3704 0044 0532 0130 00 ok", "IBAN [IBAN] ok"),
        ("GB82WEST12345698765432", "[IBAN]"),
    ],
)
def test_personal_data_is_replaced(text: str, expected: str) -> None:
    assert ALL.scrub(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "order 4111111111111112 shipped",  # fails Luhn
        "met on 2024-01-15 at 12:30",
        "pi is 3.14159, we had 1000 users and 12345 ids",
        "version 1.2.3, ext 555-1234",  # 7 digits without + or area code: too ambiguous
        "GB82WEST12345698765433",  # fails mod 97
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert ALL.scrub(text) == text


def test_default_kinds_skip_iban_and_scrub_nested_values() -> None:
    scrubber = PiiScrubber()
    assert "iban" not in scrubber.kinds
    value = {"note": ["a@b.io", {"tel": "+33 1 23 45 67 89"}], "n": 3, "none": None}
    assert scrubber.scrub_value(value) == {
        "note": ["[EMAIL]", {"tel": "[PHONE]"}],
        "n": 3,
        "none": None,
    }


def test_checksums() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("DE89 3704 0044 0532 0130 00") and not iban_valid(
        "DE89 3704 0044 0532 0130 01"
    )


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(InputError, match="allowed: card, iban, email, phone"):
        PiiScrubber(("ssn",))
