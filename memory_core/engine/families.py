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
from dataclasses import dataclass
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
    masked = _masked(text)
    return _key(masked), [_number(m) for m in _NUMBER.findall(masked)]


_DIGIT = re.compile(r"\d")
"""Every timestamp and number holds a digit, and so does every id but a uuid of letters
alone (which holds hyphens): a line with neither has nothing to mask, and most chat turns
are such lines (the masks' lookaheads were ~2 % of a LoCoMo dev replay's time)."""


def _masked(text: str) -> str:
    """``text`` with its timestamps and ids as ``<id>``."""
    if _DIGIT.search(text) is None and "-" not in text:
        return text
    return _ID.sub(ID_MARK, _TIMESTAMP.sub(ID_MARK, text))


def _key(masked: str) -> str:
    """The template of a ``_masked`` text."""
    numbered = masked if _DIGIT.search(masked) is None else _NUMBER.sub(NUMBER_MARK, masked)
    return " ".join(numbered.lower().split())


def novelty(seen: int) -> float:
    """Share of its importance the next line of a family that has ``seen`` lines keeps."""
    return min(1.0, NOVELTY_FREE / (seen + 1))


class Family:
    """One template's live members and history: a view of its row in ``FamilyIndex``'s
    columns (most families of a large atlas hold one line, and a Python object and list
    per family cost ~100 B per memory more than a row of numbers)."""

    __slots__ = ("_index", "_row")

    def __init__(self, index: FamilyIndex, row: int) -> None:
        self._index, self._row = index, row

    @property
    def seen(self) -> int:
        """Lines written with this template (merged and folded ones included)."""
        return int(self._index.seen[self._row])

    @seen.setter
    def seen(self, value: int) -> None:
        self._index.seen[self._row] = value

    @property
    def importance(self) -> float:
        """The highest importance a line of it had before novelty: what the family is worth."""
        return float(self._index.importance[self._row])

    @importance.setter
    def importance(self, value: float) -> None:
        self._index.importance[self._row] = value

    @property
    def summary(self) -> int | None:
        """Slot of the summary memory its folded lines live on, if any."""
        slot = int(self._index.summary[self._row])
        return None if slot < 0 else slot

    @property
    def size(self) -> int:
        """How many live lines it holds."""
        return int(self._index.size[self._row])

    @property
    def members(self) -> list[int]:
        """Its live lines' slots, in the order they were added."""
        index, out = self._index, []
        slot = int(index.first[self._row])
        while slot >= 0:
            out.append(slot)
            slot = int(index.next_member[slot])
        return out


def digest(key: str) -> bytes:
    """A family key's 16-byte digest: what the index is keyed by (a template is ~80
    characters, held for every line of an atlas whose lines differ in words; a 128-bit
    digest tells 100k templates apart with a collision chance far below 1e-28)."""
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


def _grown(array: np.ndarray, size: int, fill: int) -> np.ndarray:
    """``array`` extended to at least ``size`` entries (doubling), new entries ``fill``."""
    if size <= len(array):
        return array
    out = np.full(max(size, 2 * len(array)), fill, dtype=array.dtype)
    out[: len(array)] = array
    return out


class FamilyIndex:
    """Families by key digest, each a row of columns; a family's members are a linked
    list through per-slot columns (adding or dropping one is O(1))."""

    __slots__ = (
        "_rows",
        "built",
        "family_of",
        "first",
        "importance",
        "last",
        "next_member",
        "prev_member",
        "seen",
        "size",
        "summary",
    )

    def __init__(self) -> None:
        self._rows: dict[bytes, int] = {}  # key digest (``digest``) -> row
        self.seen = np.zeros(16, dtype=np.int64)  # by row
        self.importance = np.zeros(16, dtype=np.float64)
        self.summary = np.full(16, -1, dtype=np.int64)
        self.first = np.full(16, -1, dtype=np.int32)  # first and last member, -1 none
        self.last = np.full(16, -1, dtype=np.int32)
        self.size = np.zeros(16, dtype=np.int32)
        self.family_of = np.full(16, -1, dtype=np.int32)  # by slot: member or summary of
        self.next_member = np.full(16, -1, dtype=np.int32)  # by slot, in its family's list
        self.prev_member = np.full(16, -1, dtype=np.int32)
        self.built = False

    def __len__(self) -> int:
        return len(self._rows)

    def all(self) -> list[Family]:
        """Every family, in the order they were first seen."""
        return [Family(self, row) for row in self._rows.values()]

    def get(self, key: str) -> Family:
        code = digest(key)
        row = self._rows.get(code)
        if row is None:
            row = self._rows[code] = len(self._rows)
            if row == len(self.seen):
                self.seen = _grown(self.seen, row + 1, 0)
                self.importance = _grown(self.importance, row + 1, 0)
                self.summary = _grown(self.summary, row + 1, -1)
                self.first = _grown(self.first, row + 1, -1)
                self.last = _grown(self.last, row + 1, -1)
                self.size = _grown(self.size, row + 1, 0)
        return Family(self, row)

    def add_member(self, key: str, slot: int) -> Family:
        family = self.get(key)
        row = family._row
        self._place(slot, row)
        last = int(self.last[row])
        self.prev_member[slot], self.next_member[slot] = last, -1
        if last < 0:
            self.first[row] = slot
        else:
            self.next_member[last] = slot
        self.last[row] = slot
        self.size[row] += 1
        return family

    def set_summary(self, key: str, slot: int) -> None:
        row = self.get(key)._row
        self.summary[row] = slot
        self._place(slot, row)

    def discard(self, slots: np.ndarray) -> None:
        """Forget removed memories (members or summaries)."""
        for slot in slots.tolist():
            row = int(self.family_of[slot]) if slot < len(self.family_of) else -1
            if row < 0:
                continue
            self.family_of[slot] = -1
            if self.summary[row] == slot:
                self.summary[row] = -1
                continue
            self.size[row] -= 1
            before, after = int(self.prev_member[slot]), int(self.next_member[slot])
            if before < 0:
                self.first[row] = after
            else:
                self.next_member[before] = after
            if after < 0:
                self.last[row] = before
            else:
                self.prev_member[after] = before

    def _place(self, slot: int, row: int) -> None:
        if slot >= len(self.family_of):
            self.family_of = _grown(self.family_of, slot + 1, -1)
            self.next_member = _grown(self.next_member, slot + 1, -1)
            self.prev_member = _grown(self.prev_member, slot + 1, -1)
        self.family_of[slot] = row


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


def family_key(session_code: int, text: str) -> str:
    """The family a line of a session belongs to (families never span sessions: a purge
    must take a session's lines with it). Its numbers are not parsed: only a fold reads
    them (``template``), and parsing them was a quarter of the key's cost, which the
    index's rebuild after a restore pays once per memory (~2 s at 100k)."""
    return f"{session_code}{KEY_SEPARATOR}{_key(_masked(text))}"


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
            key = family_key(int(table.session[slot]), str(table.contents[slot]))
            family = index.add_member(key, slot)
            family.seen += 1
            family.importance = max(family.importance, float(table.importance[slot]))
    index.built = True
    return index
