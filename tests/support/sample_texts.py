"""The sample conversations' turns as plain texts, for tests that need real text in bulk
(real MiniLM vectors of varied, unique sentences) without replaying a conversation."""

from __future__ import annotations

import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def sample_turns() -> list[str]:
    """Every turn's text of ``sample_sessions/*.json``, in file and turn order, each once."""
    texts: list[str] = []
    for path in sorted(SAMPLES.glob("*.json")):
        for session in json.loads(path.read_text())["sessions"]:
            texts.extend(turn["text"] for turn in session["turns"])
    return list(dict.fromkeys(texts))
