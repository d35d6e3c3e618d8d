"""Which of the graph's unsure changes a person should see.

When the graph is unsure a new value is for the slot of a constraint in force (the slot
names only similar, or a free choice named with low confidence), it does not apply the
change; ``update`` then asks this gate whether the change also goes to a reviewer (the
conflicts review queue). A reviewer shown pairs that are no change at all ("Intersolar
Europe ... 9th to the 12th of September" against "Thanks. I'll check back in a couple of
days") stops reading the queue, so a pair goes to a person only when a person would review
it:

- the proposing turn is about the task: not a question (its intent is ``ask`` and it asks:
  a question mark; the classifier alone puts "The room budget is 180 EUR per night." a hair
  nearer "what is my hotel limit?" than any statement, and "could we make it 8 instead?"
  is a change) and not small talk (thanks, greetings, sign-offs, how-was-your-day:
  ``TurnFacts.small_talk``, the intent classifier's small-talk examples nearer than every
  intent's);
- it is not the turn the value in force came from: two values said side by side are two
  facts, or alternatives, never one replacing the other;
- it is not the assistant reporting what it did or found ("Booked: ICE to Munich on 8
  September" against the fair's "12th of September"): only a change it records on the
  user's behalf (intent ``change``) is the user's constraint changing, as the conflicts
  queue compares only the user's own statements;
- the value in force is not a date that had passed when the new one was said ("cooking
  this month", said in May, against "dinner tonight" in June): a past date is an occasion
  that is over, and a new one is another occasion, not a change of it (a user's graph
  spans sessions days or months apart);
- both sides are values of a slot: of one kind (an amount against an amount, a date against
  a date), neither narrated (a past-tense "went to a conference yesterday", "used to": what
  happened, not what is wanted), neither a price the assistant quotes (what something costs,
  as for the offers a confirmation adopts), and a free choice named at least as surely as
  the attribute namer's own bar on both sides;
- the values differ ("two little girls" and "2 kids" are one value), and a free choice is
  not the choice in force with more words around it ("alternative pets" against "pets",
  "other animals you could consider" against "animals"): the same thing qualified names a
  kind of it or an alternative to it, which leaves the value in force standing, where a
  replacement names another thing ("a compact" against "an SUV");
- the slots' topics are at least somewhat related (``ContextSettings.
  related_topic_similarity``). The graph compared whole slot names, and the kind word they
  share makes any two of a kind look alike ("watch date" / "feel date" 0.65 with MiniLM,
  "watch" / "feel" 0.39); when one side names no topic, the whole names are all there is.

Anything else is dropped: not applied and not queued. Not applied, because the graph was
already unsure it is the same slot and each of these signs makes that less likely, never
more; not queued, because a reviewer's time is the queue's only currency.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from memory_core.context.extract import labels
from memory_core.context.extract.slots import ASSISTANT, CHOICE, CHOICE_MIN_SIMILARITY, SlotValue
from memory_core.context.extract.turn import TurnFacts
from memory_core.context.model import Node, normalise
from memory_core.context.values import PRICES, comparable, holds, qualifies

NARRATED = frozenset({"past", "used to"})
"""Time markers of a value said as what happened or no longer holds, not as what is wanted."""


class Refusal(StrEnum):
    """Why an unsure change does not go to a reviewer."""

    QUESTION = "the proposing turn asks"
    SMALL_TALK = "the proposing turn is nearer small talk than any intent"
    SAME_TURN = "the value in force was said in the same turn"
    REPORT = "the assistant reports what it did or found"
    PASSED = "the date in force had passed when the new value was said"
    OTHER_KIND = "the values are of different kinds"
    NARRATED = "a value is narrated, not wanted"
    PRICE = "the new value is a price the assistant quotes"
    UNSURE_CHOICE = "a free choice is named below the namer's bar"
    SAME_VALUE = "the values are the same"
    QUALIFIES = "the new choice is the choice in force with more words around it"
    UNRELATED = "the slots' topics are unrelated"


def refusal(
    value: SlotValue,
    existing: Node,
    facts: TurnFacts,
    turn: int,
    *,
    similarity: Callable[[str, str], float],
    related: float,
) -> Refusal | None:
    """Why the change of ``existing`` to ``value`` (proposed by ``facts``, turn ``turn``)
    is not for a reviewer, or None when it is. ``similarity`` compares two topics (the
    graph's slot-name similarity); ``related`` is the least similarity of related topics.
    The checks run cheapest first: only the last one may embed."""
    if facts.intent == labels.ASK and "?" in facts.text:
        return Refusal.QUESTION
    if facts.small_talk:
        return Refusal.SMALL_TALK
    if turn in existing.turns:
        return Refusal.SAME_TURN
    if facts.speaker == ASSISTANT and facts.intent != labels.CHANGE:
        return Refusal.REPORT
    if _passed(existing, facts.at):
        return Refusal.PASSED
    if not comparable(value, existing):
        return Refusal.OTHER_KIND
    if {value.time_marker, existing.attr("time_marker")} & NARRATED:
        return Refusal.NARRATED
    if facts.speaker == ASSISTANT and value.kind in PRICES:
        return Refusal.PRICE
    if (
        value.kind == CHOICE
        and min(value.confidence, _confidence(existing)) < CHOICE_MIN_SIMILARITY
    ):
        return Refusal.UNSURE_CHOICE
    if _same_value(value, existing):
        return Refusal.SAME_VALUE
    if value.kind == CHOICE and qualifies(value.value, existing):
        return Refusal.QUALIFIES
    if not _related(value.topic, existing.attr("topic"), similarity, related):
        return Refusal.UNRELATED
    return None


def _related(
    topic: str | None, other: object, similarity: Callable[[str, str], float], least: float
) -> bool:
    """Two named topics at least ``least`` close; related too when a side names none (the
    whole slot names, which passed the graph's own bar, are all there is to compare)."""
    if not topic or not isinstance(other, str) or not other:
        return True
    a, b = normalise(topic), normalise(other)
    return a == b or similarity(a, b) >= least


def _passed(node: Node, at: float | None) -> bool:
    """Whether the node's resolved date (a day, a week or weekend, a month, a year) ended
    before the day of ``at`` (epoch seconds, UTC)."""
    resolved = node.attr("resolved")
    if at is None or not isinstance(resolved, str):
        return False
    end = _period_end(resolved, str(node.attr("value") or ""))
    return end is not None and end < datetime.fromtimestamp(at, UTC).date()


def _period_end(resolved: str, said: str) -> date | None:
    """The last day of a resolved date: ISO ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, the
    last being a week's Monday or a weekend's Saturday when the words said so."""
    try:
        if len(resolved) == 4:
            return date(int(resolved), 12, 31)
        if len(resolved) == 7:
            year, month = int(resolved[:4]), int(resolved[5:])
            return date(year, month, calendar.monthrange(year, month)[1])
        day = date.fromisoformat(resolved[:10])
    except ValueError:
        return None
    words = said.lower().split()
    last = words[-1] if words else ""
    return day + timedelta(days={"week": 6, "weekend": 1}.get(last, 0))


def _confidence(node: Node) -> float:
    confidence = node.attr("confidence", 1.0)
    return float(confidence) if isinstance(confidence, (int, float)) else 1.0


def _same_value(value: SlotValue, node: Node) -> bool:
    """One value in other words: the same date when both were resolved ("tomorrow" said on
    two days is two dates), the same number when both have one (units were compared
    already), else the same words (``values.holds``)."""
    resolved, number = node.attr("resolved"), node.attr("number")
    if value.resolved is not None and resolved is not None:
        return value.resolved == resolved
    if value.number is not None and isinstance(number, (int, float)):
        return value.number == number
    return holds(node, value.value)
