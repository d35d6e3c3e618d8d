"""What a scan queues: the user's own changes, once each, with progress; speakers stripped;
a finding that names nothing typed only where its turns meet no other."""

from __future__ import annotations

from typing import Any

from memory_core import ElasticMemoryAtlas
from memory_core.conflicts.guard import ConflictGuard, GuardScan
from memory_core.conflicts.queue import InMemoryReviewQueue
from memory_core.conflicts.review_filter import alone, change_key, worth_review
from memory_core.conflicts.speakers import speaker_of, utterance
from memory_core.conflicts.verdict import BaseJudge, Span, Verdict
from memory_core.engine.model import MemoryKind

USER = {"speaker": "user", "user_id": "ana"}
ASSISTANT = {"speaker": "assistant", "user_id": "ana"}


def said(atlas: ElasticMemoryAtlas, text: str, who: dict[str, str], tick: Any) -> str:
    tick(atlas)
    return atlas.add(f"{who['speaker']}: {text}", session_id="trip", metadata=who).id


def test_the_speaker_prefix_is_not_part_of_the_claim() -> None:
    assert utterance("assistant: Understood, a 5,000 cap.", ASSISTANT) == "Understood, a 5,000 cap."
    assert utterance("Budget: 5,000.", None) == "Budget: 5,000."  # no speaker named
    assert utterance("user: ", USER) == "user: "  # nothing left: kept whole
    assert speaker_of({"speaker": "  "}) is None
    assert speaker_of({"speaker": 3}) is None


def test_only_one_non_assistant_speakers_pairs_are_worth_review(
    atlas: ElasticMemoryAtlas, tick: Any
) -> None:
    user_a = atlas.get(said(atlas, "I live in Lyon.", USER, tick))
    user_b = atlas.get(said(atlas, "I live in Porto.", USER, tick))
    bot = atlas.get(said(atlas, "Noted, you live in Lyon.", ASSISTANT, tick))
    other = atlas.get(said(atlas, "I live in Oslo.", {"speaker": "Caroline"}, tick))
    plain = atlas.add("The budget is 5000 euros.", session_id="trip")
    plain_b = atlas.add("The budget is 6000 euros.", session_id="trip")
    assert worth_review(user_a, user_b)
    assert not worth_review(user_a, bot)  # the assistant repeats or confirms the user
    assert not worth_review(bot, bot)
    assert not worth_review(user_a, other)  # two people may disagree
    assert worth_review(plain, plain_b)  # application facts name no speaker


def test_a_summary_on_either_side_is_not_worth_review(atlas: ElasticMemoryAtlas, tick: Any) -> None:
    first = said(atlas, "Happy to help with Munich.", USER, tick)
    second = said(atlas, "Clear, the Zurich workshop first.", USER, tick)
    summary = atlas.summarize_nodes("trip", [first, second], kind=MemoryKind.SUMMARY)
    episode = atlas.summarize_nodes("trip", [first, second], kind=MemoryKind.EPISODIC)
    assert summary is not None and episode is not None
    turn = atlas.get(second)
    assert worth_review(atlas.get(first), turn)
    assert not worth_review(summary, episode)
    assert not worth_review(summary, turn)
    assert not worth_review(turn, episode)


def test_one_change_has_one_key_however_it_is_written() -> None:
    def verdict(old: str, new: str) -> Verdict:
        spans = (Span("a", 0, len(old), old), Span("b", 0, len(new), new))
        return Verdict("contradiction", 0.8, "number changed", "value_change", spans)

    assert change_key(verdict("5,000 euros", "6,000 euros")) == change_key(
        verdict("5000 euro", "6000 Euros")
    )
    assert change_key(verdict("5,000 euros", "6,000 euros")) != change_key(
        verdict("5,000 euros", "7,000 euros")
    )


def test_scan_queues_the_users_change_once_and_reports_progress(
    atlas: ElasticMemoryAtlas, guard: ConflictGuard, tick: Any
) -> None:
    old = said(atlas, "The trip budget is 5,000 euros.", USER, tick)
    said(atlas, "Understood, a trip budget of 5,000 euros.", ASSISTANT, tick)
    new = said(atlas, "The trip budget is 6,000 euros now.", USER, tick)
    said(atlas, "Updated: the trip budget is 6,000 euros.", ASSISTANT, tick)
    said(atlas, "Thanks, that's everything.", USER, tick)
    seen: list[tuple[int, int]] = []
    items = guard.scan(progress=lambda done, total: seen.append((done, total)))
    assert [(i.old_id, i.new_id) for i in items] == [(old, new)]
    assert items[0].reason == "number changed: '5,000 euros' -> '6,000 euros'"
    assert seen == [(i, 5) for i in range(1, 6)]


def test_alone_keeps_the_pairs_whose_memories_meet_in_no_other() -> None:
    pairs = [frozenset(p) for p in (("a", "b"), ("a", "c"), ("d", "e"), ("e", "d"))]
    assert alone(pairs) == {frozenset(("d", "e"))}
    assert alone([]) == set()


class LearnedOnlyJudge(BaseJudge):
    """Scripted: the pairs of ``learned`` contradict as a learned model alone says so
    (``untyped``), those of ``ruled`` as a rule does; all else is compatible."""

    def __init__(self, learned: list[tuple[str, str]], ruled: list[tuple[str, str]]) -> None:
        self.found = {frozenset(p): True for p in learned} | {frozenset(p): False for p in ruled}

    @property
    def name(self) -> str:
        return "scripted"

    def judge(self, a: str, b: str, similarity: float | None = None) -> Verdict:
        untyped = self.found.get(frozenset((a, b)))
        if untyped is None:
            return Verdict("compatible", 0.1, "same topic")
        spans = (Span("a", 0, len(a), a), Span("b", 0, len(b), b))
        return Verdict("contradiction", 0.75, f"{a} -> {b}", "value_change", spans, untyped)


def test_an_untyped_finding_is_queued_only_where_its_turns_meet_no_other(
    atlas: ElasticMemoryAtlas, tick: Any
) -> None:
    turns = [f"Small talk about the evening, part {n}." for n in range(6)]
    ids = [said(atlas, t, USER, tick) for t in turns]
    judge = LearnedOnlyJudge(
        learned=[(turns[0], turns[1]), (turns[0], turns[2]), (turns[3], turns[4])],
        ruled=[(turns[0], turns[5])],
    )
    guard = ConflictGuard(atlas, judge, queue=InMemoryReviewQueue())
    items = guard.scan()
    pairs = {(i.old_id, i.new_id) for i in items}
    assert pairs == {(ids[3], ids[4]), (ids[0], ids[5])}  # turn 0 met two learned findings


def test_a_scan_in_parts_counts_a_turns_untyped_findings_over_all_its_sessions(
    atlas: ElasticMemoryAtlas, tick: Any
) -> None:
    """The page's job scans a session at a time (``GuardScan``): turn 0 meets one untyped
    finding in each of two sessions, so neither is queued, as in one scan of the atlas."""
    turns = [f"Small talk about the evening, part {n}." for n in range(3)]
    ids = []
    for turn, session in zip(turns, ("monday", "monday", "tuesday"), strict=True):
        tick(atlas)
        ids.append(atlas.add(f"user: {turn}", session_id=session, metadata=USER).id)
    judge = LearnedOnlyJudge(learned=[(turns[0], turns[1]), (turns[0], turns[2])], ruled=[])
    guard = ConflictGuard(atlas, judge, queue=InMemoryReviewQueue())
    scan = GuardScan(guard)
    assert scan.session("monday") == [] and scan.session("tuesday") == []
    assert scan.finish() == []
    one_by_one = [guard.scan(session) for session in ("monday", "tuesday")]
    assert [len(items) for items in one_by_one] == [0, 1]  # tuesday's alone saw one finding
