"""LongMemEval (Wu et al., ICLR 2025) to ``atlas-session/1``: one instance, one conversation.

A file is a list of instances, each a haystack of user/assistant sessions plus one question.
The question becomes the single key fact; the turns flagged ``has_answer`` are its evidence.
Abstention questions (ids ending in ``_abs``) ask about something never said, so there is
nothing to recall; they are left out unless asked for. The oracle file lists sessions out of
time order, so sessions are sorted by date.
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
    conversation,
    describe,
    read_json,
)

ABSTENTION_SUFFIX = "_abs"
_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\))?\s*(\d{1,2}):(\d{2})\s*")
_LAYOUT_HELP = (
    "expected a LongMemEval file: a list of instances with question_id, question_type, "
    "question, answer, question_date, haystack_dates and haystack_sessions"
)


def import_file(path: Path, options: ImportOptions) -> list[ImportedConversation]:
    root = read_json(path, options)
    if isinstance(root.value, dict) and root.has("haystack_sessions"):
        return [_instance(root, options)]
    if not isinstance(root.value, list) or not root.value:
        raise root.error(f"{_LAYOUT_HELP}, got {describe(root.value)}")
    return [_instance(item, options) for item in root.items()]


def _instance(inst: At, options: ImportOptions) -> ImportedConversation:
    question_id = inst.get("question_id").text()
    question_type = inst.get("question_type").text()
    question = inst.get("question").text()
    answer = inst.get("answer").scalar_text()
    asked = inst.get("question_date")
    _date(asked)  # checked only: the format has no place for when the probe is asked
    dates = inst.get("haystack_dates").items()
    sessions = inst.get("haystack_sessions").items()
    if len(dates) != len(sessions):
        raise inst.get("haystack_dates").error(
            f"expected one date per haystack session ({len(sessions)} sessions, {len(dates)} dates)"
        )
    if not sessions:
        raise inst.get("haystack_sessions").error("expected at least one session")
    drafts: list[tuple[datetime, int, At, list[At]]] = []
    for n, (date, session) in enumerate(zip(dates, sessions, strict=True)):
        drafts.append((_date(date), n, date, session.items()))
    drafts.sort(key=lambda d: (d[0], d[1]))  # the oracle file is not in time order

    built: list[DraftSession] = []
    evidence: list[str] = []
    skipped = 0
    for start, _, date, turns in drafts:
        s = len(built) + 1
        kept: list[dict[str, Any]] = []
        for turn in turns:
            content = turn.get("content").string()
            role = turn.get("role").speaker()
            flagged = turn.opt("has_answer")
            if not content.strip():
                skipped += 1
                continue
            turn_id = f"s{s}-t{len(kept) + 1}"
            kept.append({"id": turn_id, "speaker": role, "text": content})
            if flagged is not None and flagged.flag():
                evidence.append(turn_id)
        if kept:
            built.append(DraftSession(start=start, turns=kept, date=date))
    if not built:
        raise inst.get("haystack_sessions").error("expected at least one turn with content")

    abstention = question_id.endswith(ABSTENTION_SUFFIX)
    asked_for = options.include_unanswerable or not abstention
    fact = {"id": atlas_id(question_id), "fact": answer, "evidence": evidence, "probe": question}
    return ImportedConversation(
        data=conversation(
            conv_id=atlas_id("lme", question_id),
            title=f"LongMemEval {question_id}",
            description=f"{question_type} question asked {asked.value}; imported from "
            f"{Path(inst.source).name}",
            sessions=chain_sessions(built),
            facts=[fact] if asked_for and evidence else [],
        ),
        source=inst.location,
        dropped_facts=int(asked_for and not evidence),
        unanswerable=int(abstention),
        skipped_messages=skipped,
    )


def _date(at: At) -> datetime:
    """``"2023/05/20 (Sat) 02:21"``: no timezone is given, so UTC is assumed."""
    raw = at.text()
    match = _DATE.fullmatch(raw)
    if match is None:
        raise at.error(f"{raw!r} is not a LongMemEval date like '2023/05/20 (Sat) 02:21'")
    year, month, day, hour, minute = (int(g) for g in match.groups())
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError as exc:
        raise at.error(f"{raw!r} is not a real date and time ({exc})") from None
