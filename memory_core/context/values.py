"""How a slot value compares with a constraint: its kind, its unit, the value it holds.

Shared by the rules that keep the graph consistent (``update``) and the gate that decides
which of the graph's unsure changes a person reviews (``review_gate``).
"""

from __future__ import annotations

from memory_core.context.extract.patterns import AMOUNT, MONEY, number_of
from memory_core.context.extract.slots import NUMBER, SlotValue
from memory_core.context.model import Node, normalise

NUMERIC = frozenset({MONEY, AMOUNT, NUMBER})
PRICES = frozenset({MONEY, AMOUNT})
"""Kinds the other side states as what something costs, never as a limit the user set."""


def holds(node: Node, said: str) -> bool:
    """Whether a constraint's value is ``said``: the same number ("six" and 6), the same
    words ("the red one" in "the red one"), or a time said without its suffix ("6" for
    "6pm", "7:30" for "7:30 pm")."""
    value = normalise(str(node.attr("value") or ""))
    wanted = normalise(said).removeprefix("the ")
    if not value or not wanted:
        return False
    number = number_of(wanted)
    if number is not None and node.attr("number") == number:
        return True
    if _within(wanted, value):
        return True
    return (
        wanted[0].isdigit() and value.startswith(wanted) and not value[len(wanted) :][:1].isdigit()
    )


def qualifies(said: str, node: Node) -> bool:
    """Whether ``said`` is the constraint's value with more words around it ("alternative
    pets" for "pets", "other animals you could consider" for "animals", "just a business"
    for "the business"): the same thing qualified, a kind of it or an alternative to it,
    not another value in its place. ``holds`` the other way round."""
    value = normalise(str(node.attr("value") or "")).removeprefix("the ")
    wanted = normalise(said)
    return bool(value) and wanted != value and _within(value, wanted)


def _within(part: str, whole: str) -> bool:
    """``part`` is ``whole`` or a run of its words (both normalised)."""
    return part == whole or f" {part} " in f" {whole} "


def comparable(value: SlotValue, node: Node) -> bool:
    """Whether a value can replace a constraint of the same slot name: the same family and
    unit, and not an amount against a count of a noun ("760 USD" against "8 sessions")."""
    kinds = {value.kind, str(node.attr("kind"))}
    count = value.value if value.kind == NUMBER else str(node.attr("value"))
    if NUMBER in kinds and kinds & PRICES and number_of(count) is None:
        return False  # a number with a noun of its own counts that noun ("twenty-five" none)
    return family(value.kind) == family(str(node.attr("kind"))) and same_unit(value.unit, node)


def family(kind: str) -> str:
    """Amounts and plain numbers compare as one family; every other kind is its own."""
    return "numeric" if kind in NUMERIC else kind


def same_unit(unit: str | None, node: Node) -> bool:
    """Values in two units (16 GB and 14 inch, 55 inch and 1,300 GBP) are never one slot;
    a value without a unit may be either."""
    other = node.attr("unit")
    return unit is None or other is None or normalise(unit) == normalise(str(other))
