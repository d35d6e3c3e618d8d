"""The shipped sample conversations: valid, round-trippable and meeting the set's requirements."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from memory_core.harness.session_format import (
    Conversation,
    conversation_to_dict,
    load_conversation,
    load_conversations,
    parse_conversation,
)

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
FILES = sorted(SAMPLES.glob("*.json"))
DAY = 86_400.0


@pytest.fixture(scope="module")
def conversations() -> list[Conversation]:
    return load_conversations([SAMPLES])


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_sample_round_trips(path: Path) -> None:
    conv = load_conversation(path)
    again = parse_conversation(json.loads(json.dumps(conversation_to_dict(conv))), str(path))
    assert again == conv


def test_set_size_and_fact_counts(conversations: list[Conversation]) -> None:
    assert len(conversations) >= 8
    for conv in conversations:
        expects = [f.expect for f in conv.key_facts]
        assert len(expects) >= 10, conv.id
        assert "forgotten" in expects and "recalled" in expects, conv.id
    assert sum(len(list(c.turns())) for c in conversations) >= 1200


def test_one_long_companion_conversation(conversations: list[Conversation]) -> None:
    long_ones = [
        c
        for c in conversations
        if len(list(c.turns())) >= 300
        and len(c.sessions) >= 10
        and c.sessions[-1].turns[-1].at - c.sessions[0].started_at >= 60 * DAY
    ]
    assert long_ones


def test_sessions_are_spread_out_in_time(conversations: list[Conversation]) -> None:
    for conv in conversations:
        gaps = [b.started_at - a.turns[-1].at for a, b in pairwise(conv.sessions)]
        assert min(gaps) >= 3600, conv.id  # sessions are hours to weeks apart


def test_probes_paraphrase_and_facts_sit_mostly_in_user_turns(
    conversations: list[Conversation],
) -> None:
    evidence_speakers = []
    for conv in conversations:
        for fact in conv.key_facts:
            for turn_id in fact.evidence:
                turn = conv.turn_by_id(turn_id)
                evidence_speakers.append(turn.speaker)
                assert fact.probe.lower().rstrip("?") not in turn.text.lower(), fact.id
    assert evidence_speakers.count("user") / len(evidence_speakers) >= 0.8


def test_monitoring_sample_has_machine_speakers(conversations: list[Conversation]) -> None:
    speakers = {t.speaker for c in conversations for t in c.turns()}
    assert {"user", "assistant", "system", "sensor"} <= speakers


def test_atlas_validate_console_script_accepts_the_samples() -> None:
    atlas = Path(sys.executable).with_name("atlas")
    result = subprocess.run(
        [str(atlas), "validate", str(SAMPLES)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("OK ") == len(FILES)
