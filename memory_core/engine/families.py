"""Families of templated lines: what differs only in numbers, ids and timestamps.

"Status update 17: build 17 finished with 3 warnings." and "Status update 18: build 18
finished with 0 warnings." say the same thing twice. An agent's memory sees such lines
by the hundred (CI logs, heartbeats, sensor readings, tool output); counted one memory
per line they outweigh a fact said once (issue #25). A line's *template* masks its
timestamps, ids and numbers; lines sharing a template form a family, and a family is
worth about one memory:

- **novelty**: the n-th line of a family starts with its importance times
  ``min(1, 2 / n)`` — the first two count fully (a fact restated once is not a flood),
  the tenth a fifth;
- **no reinforcement by repetition**: a later line that merges into a near-duplicate
  adds its provenance but does not count as an access;
- **folding**: once ``family_fold_at`` lines of a family are held, the older ones are
  folded into one summary memory that names how many lines it stands for and the range
  of every number that varied, with the provenance of all of them.

The index maps a template to its live members (by slot) and writes seen; it is updated
on insert and on removal, so nothing scans all memories per write. It is derived state:
an atlas restored from a snapshot or following a recording rebuilds it from the stored
texts on first use.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from memory_core.engine.model import MemoryKind
from memory_core.engine.table import ACTIVE_CODE, kind_code

if TYPE_CHECKING:
    from memory_core.engine.state import AtlasState

_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
)
_ID = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"  # uuid
    r"|\b(?=[0-9a-z]*\d)(?=[0-9a-z]*[a-z])[0-9a-z]{6,}\b",  # hex / base36 ids with a digit
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?:(?<!\w)[-+])?\d+(?:[.,]\d+)*")
"""Numbers, inside identifiers too ("node-7", "tmp0", "module_32"); a sign only where it
cannot be a hyphen."""
ID_MARK, NUMBER_MARK = "<id>", "<n>"
KEY_SEPARATOR = "\x1f"
_HIDDEN = 0xE000
NOVELTY_FREE = 2
"""Lines of a family that count fully; the n-th after them counts ``NOVELTY_FREE / n``."""


def template(text: str) -> tuple[str, list[float]]:
    """A line's template (timestamps and ids as ``<id>``, numbers as ``<n>``, lowercase,
    spaces collapsed) and its numbers in order."""
    masked = _ID.sub(ID_MARK, _TIMESTAMP.sub(ID_MARK, text))
    numbers = [_number(m) for m in _NUMBER.findall(masked)]
    key = _NUMBER.sub(NUMBER_MARK, masked)
    return " ".join(key.lower().split()), numbers


def novelty(seen: int) -> float:
    """Share of its importance the next line of a family that has ``seen`` lines keeps."""
    return min(1.0, NOVELTY_FREE / (seen + 1))


@dataclass(slots=True)
class Family:
    """One template's live members and history."""

    members: list[int] = field(default_factory=list)
    seen: int = 0
    """Lines written with this template (merged and folded ones included)."""
    importance: float = 0.0
    """The highest importance a line of it had before novelty: what the family is worth."""
    summary: int | None = None
    """Slot of the summary memory its folded lines live on, if any."""


def digest(key: str) -> bytes:
    """A family key's 16-byte digest: what the index is keyed by (a template is ~80
    characters, held for every line of an atlas whose lines differ in words; a 128-bit
    digest tells 100k templates apart with a collision chance far below 1e-28)."""
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


@dataclass(slots=True)
class FamilyIndex:
    families: dict[bytes, Family] = field(default_factory=dict)
    """Key digest (``digest``) -> the family."""
    of_slot: list[Family | None] = field(default_factory=list)
    """Slot -> the family it is a member or the summary of, for members and summaries."""
    built: bool = False

    def get(self, key: str) -> Family:
        code = digest(key)
        family = self.families.get(code)
        if family is None:
            family = self.families[code] = Family()
        return family

    def add_member(self, key: str, slot: int) -> Family:
        family = self.get(key)
        if family.members:
            family.members.append(slot)
        else:  # most families hold one line: a list of one, not append's room for four
            family.members = [slot]
        self._place(slot, family)
        return family

    def set_summary(self, key: str, slot: int) -> None:
        family = self.get(key)
        family.summary = slot
        self._place(slot, family)

    def discard(self, slots: np.ndarray) -> None:
        """Forget removed memories (members or summaries)."""
        of_slot = self.of_slot
        for slot in slots.tolist():
            family = of_slot[slot] if slot < len(of_slot) else None
            if family is None:
                continue
            of_slot[slot] = None
            if family.summary == slot:
                family.summary = None
            elif slot in family.members:
                family.members.remove(slot)

    def _place(self, slot: int, family: Family) -> None:
        if slot >= len(self.of_slot):
            self.of_slot.extend([None] * (slot + 1 - len(self.of_slot)))
        self.of_slot[slot] = family


def summary_text(texts: list[str], numbers: list[list[float]], lines: int) -> str:
    """The newest line with every number that varied written as its range, prefixed by
    how many lines it stands for: "150 similar lines: Status update 17–166: ...".

    Numbers are shown as ranges only where every folded line has the same count of
    numbers (the same template guarantees it unless a number sat inside an id)."""
    newest = texts[-1]
    same_shape = numbers and all(len(n) == len(numbers[-1]) for n in numbers)
    if same_shape and numbers[-1]:
        columns = np.array(numbers, dtype=np.float64)
        low, high = columns.min(axis=0), columns.max(axis=0)
        spans = iter(zip(low.tolist(), high.tolist(), strict=True))

        def span(match: re.Match[str]) -> str:
            lo, hi = next(spans)
            return match.group(0) if lo == hi else f"{_show(lo)}–{_show(hi)}"

        masked_ids: list[str] = []

        def hide(match: re.Match[str]) -> str:  # a private-use character, no digit
            masked_ids.append(match.group(0))
            return chr(_HIDDEN + len(masked_ids) - 1)

        protected = _ID.sub(hide, _TIMESTAMP.sub(hide, newest))
        ranged = _NUMBER.sub(span, protected)
        newest = re.sub("[\ue000-\uf8ff]", lambda m: masked_ids[ord(m.group(0)) - _HIDDEN], ranged)
    return f"{lines} similar lines: {newest}"


def _number(raw: str) -> float:
    try:
        return float(raw.replace(",", ""))
    except ValueError:  # "1.2.3" (a version): keep its first part
        return float(raw.split(".")[0].replace(",", "") or 0)


def _show(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


@dataclass(frozen=True, slots=True)
class Fold:
    """What folding a family's older lines writes: one summary in place of ``slots``."""

    slots: np.ndarray
    """The memories folded (the previous summary included), removed once it is written."""
    text: str
    metadata: dict[str, Any]
    provenance: tuple[str, ...]
    importance: float


def plan_fold(state: AtlasState, key: str, keep: int) -> Fold | None:
    """The fold of ``key``'s members other than ``keep`` that may go (not in a working
    tier, not pinned, active), together with the family's previous summary; None when
    fewer than two lines would be folded."""
    table = state.table
    family = state.families.get(key)
    slots = np.array([m for m in family.members if m != keep], np.int64)
    if len(slots):
        slots = slots[
            ~table.working[slots] & ~table.pinned[slots] & (table.status[slots] == ACTIVE_CODE)
        ]
    if len(slots) < 2:
        return None
    slots = slots[np.argsort(table.created[slots], kind="stable")]
    texts = [str(table.contents[s]) for s in slots.tolist()]
    numbers = [template(t)[1] for t in texts]
    lines, first, last = len(slots), float(table.created[slots[0]]), float(table.created[slots[-1]])
    provenance: list[str] = []
    old = family.summary
    if old is not None:
        meta = table.metadata[old] or {}
        lines += int(meta.get("lines", 0))
        first = min(first, float(meta.get("first_at", first)))
        ranges = meta.get("ranges") or []
        if ranges and all(len(n) == len(ranges) for n in numbers):
            numbers = [[lo for lo, _ in ranges], [hi for _, hi in ranges], *numbers]
        provenance.extend(table.provenance[old])
        slots = np.append(slots, old)
    for s in slots.tolist():
        provenance.extend(table.provenance[s] or (str(table.ids[s]),))
    same = bool(numbers) and all(len(n) == len(numbers[-1]) for n in numbers)
    columns = np.array(numbers, dtype=np.float64) if same and numbers[-1] else None
    metadata: dict[str, Any] = {
        "type": "family",
        "template": key.split(KEY_SEPARATOR, 1)[-1],
        "lines": lines,
        "first_at": first,
        "last_at": last,
        "ranges": []
        if columns is None
        else [
            [lo, hi]
            for lo, hi in zip(columns.min(0).tolist(), columns.max(0).tolist(), strict=True)
        ],
    }
    return Fold(
        slots,
        summary_text(texts, numbers, lines),
        metadata,
        tuple(dict.fromkeys(provenance)),
        family.importance,
    )


def family_key(session_code: int, text: str) -> tuple[str, list[float]]:
    """The family a line of a session belongs to (families never span sessions: a purge
    must take a session's lines with it), and the line's numbers."""
    key, numbers = template(text)
    return f"{session_code}{KEY_SEPARATOR}{key}", numbers


def build_index(state: AtlasState) -> FamilyIndex:
    """The index from the stored texts (once, after a restore or on a follower)."""
    table, index = state.table, state.families
    slots = table.alive_slots()
    slots = slots[np.argsort(table.created[slots], kind="stable")]
    session_kind, summary_kind = kind_code(MemoryKind.SESSION), kind_code(MemoryKind.SUMMARY)
    for slot in slots.tolist():
        meta = table.metadata[slot] or {}
        if table.kind[slot] == summary_kind and meta.get("type") == "family":
            key = f"{int(table.session[slot])}{KEY_SEPARATOR}{meta.get('template', '')}"
            index.set_summary(key, slot)
            index.get(key).seen += int(meta.get("lines", 0))
        elif table.kind[slot] == session_kind and table.status[slot] == ACTIVE_CODE:
            key, _ = family_key(int(table.session[slot]), str(table.contents[slot]))
            family = index.add_member(key, slot)
            family.seen += 1
            family.importance = max(family.importance, float(table.importance[slot]))
    index.built = True
    return index
