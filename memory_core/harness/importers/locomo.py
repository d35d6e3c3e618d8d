"""LoCoMo (Maharana et al., ACL 2024) to ``atlas-session/1``.

Two published layouts: one conversation per file (``speaker_a``, ``session_N``, ``qa`` at the
top) and ``locomo10.json`` (a list of ``{sample_id, conversation: {...}, qa}``). Questions of
categories 1-4 become key facts; their evidence is cleaned of repeated and unknown turn ids
(the published data has both). Category 5 questions are adversarial: their premise is false,
so there is no answer to recall; they are left out unless asked for.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.harness.importers.base import (
    At,
    DraftSession,
    ImportedConversation,
    ImportOptions,
    atlas_id,
    chain_sessions,
    clean_evidence,
    conversation,
    evidence_ids,
    read_json,
)

CATEGORIES = range(1, 6)
UNANSWERABLE = 5
_SESSION = re.compile(r"session_(\d+)")
_FACT_ID = re.compile(r"qa\d+-cat(\d)")
_DATE = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.IGNORECASE
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_LAYOUT_HELP = (
    "expected a LoCoMo conversation (an object with speaker_a, speaker_b, session_N, "
    "session_N_date_time and qa) or a list of {sample_id, conversation, qa} as in locomo10.json"
)


def category(fact_id: str) -> int | None:
    """The LoCoMo category of an imported key fact (ids are ``qa<index>-cat<category>``)."""
    match = _FACT_ID.fullmatch(fact_id)
    return int(match.group(1)) if match else None


def import_file(path: Path, options: ImportOptions) -> list[ImportedConversation]:
    root = read_json(path, options)
    if isinstance(root.value, list):
        if not root.value:
            raise root.error(_LAYOUT_HELP + ", got an empty list")
        return [
            _sample(item, item.get("conversation"), f"{path.stem}-{i}", options)
            for i, item in enumerate(root.items())
        ]
    if root.has("conversation"):
        return [_sample(root, root.get("conversation"), path.stem, options)]
    if root.has("speaker_a"):
        return [_sample(root, root, path.stem, options)]
    raise root.error(_LAYOUT_HELP)


def _sample(sample: At, conv: At, fallback: str, options: ImportOptions) -> ImportedConversation:
    sample_id = sample.opt("sample_id")
    name = sample_id.text() if sample_id is not None else fallback
    speakers = (conv.get("speaker_a").speaker(), conv.get("speaker_b").speaker())
    numbers = sorted(int(m.group(1)) for k in conv.fields() if (m := _SESSION.fullmatch(k)))
    if not numbers:
        raise conv.error("expected at least one session_N list of turns")
    drafts = [_session(conv, n) for n in numbers]
    known: set[str] = set()
    for n, draft in zip(numbers, drafts, strict=True):
        for t, turn in enumerate(draft.turns):
            if turn["id"] in known:
                at = conv.get(f"session_{n}").items()[t].get("dia_id")
                raise at.error(f"duplicate dia_id {turn['id']!r}; turn ids must be unique")
            known.add(turn["id"])
    facts: list[dict[str, Any]] = []
    dropped_evidence = dropped_facts = unanswerable = 0
    for index, qa in enumerate(sample.get("qa").items()):
        cat = qa.get("category").integer(CATEGORIES)
        question = qa.get("question").text()
        given = evidence_ids(qa.get("evidence"))
        if cat == UNANSWERABLE:
            unanswerable += 1
            if not options.include_unanswerable:
                continue
            fact = _unanswerable_fact(qa)
        else:
            fact = qa.get("answer").scalar_text()
        evidence, removed = clean_evidence(given, known)
        dropped_evidence += removed
        if not evidence:
            dropped_facts += 1
            continue
        facts.append(
            {"id": f"qa{index}-cat{cat}", "fact": fact, "evidence": evidence, "probe": question}
        )
    return ImportedConversation(
        data=conversation(
            conv_id=atlas_id("locomo", name),
            title=f"LoCoMo {name}: {speakers[0]} and {speakers[1]}",
            description=f"Imported from {Path(sample.source).name}; QA categories 1-4 as key facts"
            + (", category 5 (unanswerable) included" if options.include_unanswerable else ""),
            sessions=chain_sessions(drafts),
            facts=facts,
        ),
        source=sample.location,
        dropped_evidence=dropped_evidence,
        dropped_facts=dropped_facts,
        unanswerable=unanswerable,
    )


def _session(conv: At, n: int) -> DraftSession:
    date = conv.get(f"session_{n}_date_time")
    turns_at = conv.get(f"session_{n}")
    items = turns_at.items()
    if not items:
        raise turns_at.error("expected a non-empty list of turns")
    return DraftSession(start=_date(date), turns=[_turn(t) for t in items], date=date)


def _turn(turn: At) -> dict[str, Any]:
    text = turn.get("text")
    said = text.string()
    caption = turn.opt("blip_caption")
    if caption is not None:
        said = f"{said} [shares a photo: {caption.text()}]".strip()
    if not said.strip():
        raise text.error("expected the turn's words (or a blip_caption for a shared photo)")
    return {
        "id": turn.get("dia_id").ident(),
        "speaker": turn.get("speaker").speaker(),
        "text": said,
    }


def _date(at: At) -> datetime:
    """``"1:56 pm on 8 May, 2023"``: LoCoMo gives no timezone, so UTC is assumed."""
    raw = at.text()
    match = _DATE.fullmatch(raw)
    month = _MONTHS.get(match.group(5).lower()) if match else None
    if match is None or month is None:
        raise at.error(f"{raw!r} is not a LoCoMo date like '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, _, year = match.groups()
    if not 1 <= int(hour) <= 12:
        raise at.error(f"{raw!r} has hour {hour}; a 12-hour clock time was expected")
    try:
        return datetime(
            int(year), month, int(day), int(hour) % 12 + (12 if half.lower() == "pm" else 0),
            int(minute), tzinfo=UTC,
        )  # fmt: skip
    except ValueError as exc:
        raise at.error(f"{raw!r} is not a real date and time ({exc})") from None


def _unanswerable_fact(qa: At) -> str:
    wrong = qa.opt("adversarial_answer")
    suffix = f" (adversarial answer: {wrong.scalar_text()})" if wrong is not None else ""
    return "Unanswerable as asked: the conversation contradicts the question's premise" + suffix
