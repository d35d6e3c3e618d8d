"""What a scan puts in front of a person: real changes, once each.

A scan of a conversation finds many pairs that contradict on the surface and that nobody
needs to settle: the assistant confirming what the user said ("Understood, a 5,000 euro
cap"), then confirming the change ("Updated: cap of 6,000 euros"); a booking carried out
after the plan changed; the same change stated again in a later turn. The user's own
statements are the record a reviewer settles, so in a conversation (memories that name
their speaker) a pair is queued only when one speaker, other than the assistant, said
both sides: two people may disagree without either contradicting themselves, and an
assistant's turn restates, confirms or acts on the user's. Memories without a speaker
(facts written by an application) are all compared. A summary (a session summary, an
episode) restates the turns it covers, so a pair with a summary on either side is not
queued: a change between two summaries of the same conversation is a change between its
turns, and the scan finds it there, with the speaker and the words the user said
(otherwise the demo's two session summaries made a "name changed: 'Happy' -> 'Clear'" item
out of two greetings). Questions and acknowledgements state nothing and never reach here:
the judge compares them only through the values they presuppose. A change seen once is
not queued again from another pair of turns.

A contradiction that names nothing typed (``Verdict.untyped``: a learned model's with no
rule's finding under it, or one word swapped in the same frame; no slot, value, denial or
correction) is queued only when neither of its turns meets another such finding. A change
replaces a value: its new turn meets the old one, not half the conversation. A turn set
against several others this way is small talk the models or the swap rule misread: "Woke
up to black ice on the pavements this morning" / "Finally tackled the fridge today."
(cross-encoder p=1.00) from a turn caught in up to nine such pairs; "My phone's been acting
up all evening." / "... all morning." / "... all afternoon." (docs/conflicts.md, eighth
pass).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from memory_core.conflicts.speakers import ASSISTANT, speaker_of
from memory_core.conflicts.verdict import Verdict
from memory_core.engine.model import MemoryKind, MemoryNode

ScanProgress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while a scan runs (memories scanned so far)."""

_TERM = re.compile(r"[0-9][0-9,.]*[0-9]|[0-9]|[^\W\d_]+")
RESTATEMENTS = frozenset({MemoryKind.SUMMARY, MemoryKind.EPISODIC})
"""Kinds of memory that restate other memories (session summaries, the rules' episodes)."""


def worth_review(old: MemoryNode, new: MemoryNode) -> bool:
    """Whether a contradicting pair is one a person would settle (see module doc)."""
    if old.kind in RESTATEMENTS or new.kind in RESTATEMENTS:
        return False
    left, right = speaker_of(old.metadata), speaker_of(new.metadata)
    if left is None and right is None:
        return True
    return left == right and left is not None and left.lower() != ASSISTANT


def change_key(verdict: Verdict) -> tuple[str, ...]:
    """What changed, from what to what, normalised ("5,000 euro" = "5000 euros"), so one
    change found in several pairs of turns is queued once."""
    sides = []
    for side in ("a", "b"):
        text = " ".join(s.text for s in verdict.spans if s.side == side).lower()
        terms = sorted({t.replace(",", "").rstrip("s") for t in _TERM.findall(text)})
        sides.append(" ".join(terms))
    return (verdict.kind, *sides) if any(sides) else (verdict.kind, verdict.reason)


def alone(pairs: Iterable[frozenset[str]]) -> set[frozenset[str]]:
    """The pairs of memory ids neither of whose memories is in another of ``pairs``: the
    untyped findings a scan queues (module doc)."""
    found = set(pairs)
    count = Counter(i for pair in found for i in pair)
    return {pair for pair in found if all(count[i] == 1 for i in pair)}
