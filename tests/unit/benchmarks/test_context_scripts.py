"""Task state scripts: the moves' semantics, and the scripted conversation files built from them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.context_data import load_expected
from benchmarks.context_scripts import (
    DERIVED,
    MOVES,
    expect_from_script,
    split_by_kind,
)
from memory_core.errors import InputError

DATA = Path(__file__).parents[2] / "data" / "context"
SCRIPTED = {name: DATA / f"task_scripts_{name}.jsonl" for name in ("dev", "test")}
SEED = 2026  # the split seed the README names
REGISTERS = {
    "chat with typos",
    "voice assistant transcript",
    "terse business",
    "rambling",
    "formal",
}


def money(amount: int) -> dict[str, Any]:
    return {"value": f"{amount} EUR", "number": amount, "unit": "EUR"}


def test_a_relative_change_replaces_and_a_restatement_changes_nothing() -> None:
    got = expect_from_script(
        [
            {"move": "state", "slot": "budget", "value": money(200)},
            {"move": "relative", "slot": "budget", "value": money(250)},
            {"move": "restate", "slot": "budget"},
            {"move": "ask", "slot": "budget"},
        ]
    )
    assert got["constraints_in_force"] == [{"slot": "budget", **money(250)}]
    assert got["replaced"] == [{"slot": "budget", **money(200)}]


def test_forgetting_the_last_change_puts_the_old_value_back() -> None:
    got = expect_from_script(
        [
            {"move": "state", "slot": "budget", "value": money(200)},
            {"move": "confirm_offer", "slot": "budget", "value": money(300)},
            {"move": "quote", "value": money(90)},
            {"move": "forget_last"},
        ]
    )
    assert got["constraints_in_force"] == [{"slot": "budget", **money(200)}]
    assert got["replaced"] == [] and got["forgotten"] == [money(300)]
    assert got["not_constraints"] == [money(90)]


def test_forgetting_a_topic_takes_every_value_it_had_and_cancel_takes_the_slot_off() -> None:
    got = expect_from_script(
        [
            {"move": "state", "slot": "pool", "value": {"value": "indoor pool"}},
            {"move": "replace", "slot": "pool", "value": {"value": "rooftop pool"}},
            {"move": "state", "slot": "spa", "value": {"value": "spa day"}},
            {"move": "cancel", "slot": "spa", "value": "spa day"},
            {"move": "forget_topic", "slot": "pool"},
            {"move": "reject_offer", "value": {"value": "Hotel Adler"}},
            {"move": "other_person", "value": money(300)},
        ]
    )
    assert got == {
        "constraints_in_force": [],
        "replaced": [],
        "forgotten": [{"value": "indoor pool"}, {"value": "rooftop pool"}],
        "cancelled": ["spa day"],
        "not_constraints": [{"value": "Hotel Adler"}, money(300)],
    }


@pytest.mark.parametrize(
    ("moves", "field"),
    [
        ([{"move": "guess", "slot": "a"}], "moves[0].move"),
        ([{"move": "state", "value": money(1)}], "moves[0].slot"),
        ([{"move": "forget_last"}], "moves[0]"),
        ([{"move": "forget_topic", "slot": "pool"}], "moves[0].slot"),
    ],
)
def test_bad_scripts_are_refused_naming_the_move(moves: list[dict[str, Any]], field: str) -> None:
    with pytest.raises(InputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        expect_from_script(moves)


def test_the_split_is_by_kind_and_fixed_by_the_seed() -> None:
    rows = [{"id": f"{kind}-{i}", "kind": kind} for kind in ("a", "b") for i in range(5)]
    dev, test = split_by_kind(rows, 7)
    assert (dev, test) == split_by_kind(list(reversed(rows)), 7)
    assert Counter(i[0] for i in dev) == {"a": 2, "b": 2} and len(test) == 6


# ---------------------------------------------------------------- the scripted files


@pytest.fixture(scope="module")
def scripted() -> dict[str, list[dict[str, Any]]]:
    return {name: load_expected(path) for name, path in SCRIPTED.items()}


def test_scripted_files_have_the_promised_shape(
    scripted: dict[str, list[dict[str, Any]]],
) -> None:
    rows = scripted["dev"] + scripted["test"]
    assert len(rows) >= 40 and len({r["id"] for r in rows}) == len(rows)
    kinds = Counter(r["kind"] for r in rows)
    assert len(kinds) >= 8 and {r["kind"] for r in scripted["dev"]} == set(kinds)
    assert {r["kind"] for r in scripted["test"]} == set(kinds)
    for r in rows:
        assert 6 <= len(r["turns"]) <= 14, r["id"]
        assert [t["speaker"] for t in r["turns"][:2]] == ["user", "assistant"], r["id"]
        assert r["script"]["register"] in REGISTERS, r["id"]
        assert r["expect"]["constraints_in_force"] and r["expect"]["entities"], r["id"]
    used = Counter(m["move"] for r in rows for m in r["script"]["moves"])
    assert set(used) == set(MOVES) and min(used.values()) >= 5, used
    assert {r["script"]["register"] for r in rows} == REGISTERS


def test_each_expectation_is_what_its_script_implies(
    scripted: dict[str, list[dict[str, Any]]],
) -> None:
    """The value lists were derived from the moves, never written against the rendering."""
    for r in scripted["dev"] + scripted["test"]:
        derived = expect_from_script(r["script"]["moves"])
        assert {key: r["expect"][key] for key in DERIVED} == derived, r["id"]


def test_the_files_hold_the_split_the_readme_states(
    scripted: dict[str, list[dict[str, Any]]],
) -> None:
    dev, test = split_by_kind(scripted["dev"] + scripted["test"], SEED)
    assert [r["id"] for r in scripted["dev"]] == dev
    assert [r["id"] for r in scripted["test"]] == test
