from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.errors import InputError
from memory_core.knowledge.items import Checklist, parse_version

from .conftest import stored_item


@pytest.mark.parametrize(
    ("text", "expected"),
    [("3.1.2", (3, 1, 2)), ("v3.1", (3, 1)), ("3.1.0", (3, 1)), ("10", (10,)), (" 2.0 ", (2,))],
)
def test_parse_version(text: str, expected: tuple[int, ...]) -> None:
    assert parse_version(text) == expected


def test_versions_compare_numerically_not_as_text() -> None:
    assert parse_version("3.10") > parse_version("3.9")


@pytest.mark.parametrize("bad", ["", "three", "3.x", "3..1", "-1"])
def test_parse_version_refuses_non_numeric(bad: str) -> None:
    with pytest.raises(InputError) as info:
        parse_version(bad)
    assert info.value.field == "version"


def test_checklist_round_trip_and_refusals() -> None:
    checklist = Checklist(verifiable=True, used_often=False, clear_validity=None)
    assert Checklist.from_dict(checklist.as_dict()) == checklist
    assert checklist.refused() == ["used_often"]
    assert Checklist.from_dict(None) == Checklist()


def test_valid_at_is_half_open() -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    t1 = datetime(2025, 1, 1, tzinfo=UTC)
    item = stored_item(
        id="x", key="k", source_name="S", content="c", effective_from=t0, expires_at=t1
    )
    assert item.valid_at(t0)
    assert not item.valid_at(t1)
    assert item.label == "S v1"


_parts = st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=5)


def _strip(parts: list[int]) -> tuple[int, ...]:
    while len(parts) > 1 and parts[-1] == 0:
        parts = parts[:-1]
    return tuple(parts)


@given(_parts, _parts)
def test_version_order_is_numeric_tuple_order(a: list[int], b: list[int]) -> None:
    va, vb = (parse_version(".".join(map(str, p))) for p in (a, b))
    assert va == _strip(a) and vb == _strip(b)
    assert (va < vb) == (_strip(a) < _strip(b))
