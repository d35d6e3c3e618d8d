"""Task state scripts: the expected context graph follows from a list of moves, not from the text.

The second task-conversation set (``tests/data/context/task_scripts_{dev,test}.jsonl``, see
the README there) was written script first: a goal, two to four slots and a sequence of
moves on them, then a conversation rendered by hand from the script. Each row keeps its
script (``{"register", "moves"}``) next to the turns, and its ``expect`` lists of values are
what :func:`expect_from_script` derives from the moves, so a test can check that no
expectation was written by hand against the rendering. The split rule lives here too, so
the test can recompute it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from memory_core.errors import InputError

#: the user sets a slot: first statement, a relative change ("bump it up by 50", the new value
#: is given), a replacement ("make it X instead") or a yes to a value the assistant offered
VALUE_MOVES = ("state", "relative", "replace", "confirm_offer")
#: values that are never the user's constraint: an offer the user turns down, another
#: person's value, a price or figure the assistant quotes
NOT_MINE_MOVES = ("reject_offer", "other_person", "quote")
#: moves that change nothing in the expected graph: the same value said again in other
#: words (it must stay one node), a question about the value in force
NEUTRAL_MOVES = ("restate", "ask")
#: ``cancel`` takes a slot off (its value is the cancelled thing, a string); ``forget_topic``
#: soft-deletes every value the slot ever had; ``forget_last`` withdraws the last value move
OTHER_MOVES = ("cancel", "forget_topic", "forget_last")
MOVES = VALUE_MOVES + NOT_MINE_MOVES + NEUTRAL_MOVES + OTHER_MOVES
DERIVED = ("constraints_in_force", "replaced", "forgotten", "cancelled", "not_constraints")
DEV_SHARE = 0.4


def _unslotted(value: Mapping[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if key != "slot"}


def expect_from_script(moves: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """The five value lists of ``expect`` that a script's moves imply, in the order they arise.

    A value move on a slot that holds a value replaces it (the old one goes to ``replaced``);
    ``forget_last`` undoes the latest value move, putting back the value it replaced.
    """
    current: dict[str, dict[str, Any]] = {}
    history: dict[str, list[dict[str, Any]]] = defaultdict(list)
    out: dict[str, list[Any]] = {"forgotten": [], "cancelled": [], "not_constraints": []}
    last: tuple[str, bool] | None = None  # slot of the latest value move, and whether it replaced
    for i, move in enumerate(moves):
        where = f"moves[{i}]"
        kind, raw_slot = move.get("move"), move.get("slot")
        slot = raw_slot if isinstance(raw_slot, str) else ""
        if kind not in MOVES:
            raise InputError(f"{where}.move", f"{kind!r}; allowed: {', '.join(MOVES)}")
        needs_slot = kind in VALUE_MOVES + OTHER_MOVES + NEUTRAL_MOVES and kind != "forget_last"
        if needs_slot and not slot.strip():
            raise InputError(f"{where}.slot", f"a {kind} move needs a non-blank slot")
        if kind in VALUE_MOVES:
            if slot in current:
                history[slot].append(current[slot])
            last = (slot, slot in current)
            current[slot] = {"slot": slot, **move["value"]}
        elif kind in NOT_MINE_MOVES:
            out["not_constraints"].append(move["value"])
        elif kind == "cancel":
            current.pop(slot, None)
            out["cancelled"].append(move["value"])
        elif kind == "forget_topic":
            if slot not in current:
                raise InputError(f"{where}.slot", f"{slot!r} holds no value to forget")
            gone = [*history.pop(slot, []), current.pop(slot)]
            out["forgotten"] += [_unslotted(value) for value in gone]
        elif kind == "forget_last":
            if last is None:
                raise InputError(where, "forget_last needs a value move before it")
            slot, replaced = last
            out["forgotten"].append(_unslotted(current.pop(slot)))
            if replaced:
                current[slot] = history[slot].pop()
            last = None
    return {
        "constraints_in_force": list(current.values()),
        "replaced": [value for values in history.values() for value in values],
        **out,
    }


def split_by_kind(rows: Sequence[Mapping[str, Any]], seed: int) -> tuple[list[str], list[str]]:
    """Dev and test ids: within each kind, ids sorted, shuffled by ``Random(f"{seed}:{kind}")``,
    the first ``round(DEV_SHARE * n)`` to dev, the rest to test."""
    by_kind: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        by_kind[str(row["kind"])].append(str(row["id"]))
    dev: list[str] = []
    test: list[str] = []
    for kind in sorted(by_kind):
        ids = sorted(by_kind[kind])
        random.Random(f"{seed}:{kind}").shuffle(ids)
        cut = round(DEV_SHARE * len(ids))
        dev += ids[:cut]
        test += ids[cut:]
    return dev, test
