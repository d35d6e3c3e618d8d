"""Who said a memory, and what they said: the attribution prefix is not part of the claim.

The agent loop stores an utterance as ``"Speaker: text"`` (``agent/attribution.py``) with
the speaker in ``metadata["speaker"]``, so retrieval sees who said it. For the judge that
prefix is noise: "assistant: Understood, a 5,000 euro cap ..." would read "Understood" as a
name after the colon, and the two speakers' turns of one exchange would be compared as if
one person said both. The conflict code judges the bare utterance and knows the speaker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SPEAKER_KEY = "speaker"
"""Metadata key naming who said a memory (set by the agent loop and the harness)."""
ASSISTANT = "assistant"
_SEPARATOR = ": "  # agent.attribution.SEPARATOR (conflicts may not import agent)


def speaker_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The memory's speaker from its metadata, or None when it names none."""
    speaker = (metadata or {}).get(SPEAKER_KEY)
    return speaker.strip() or None if isinstance(speaker, str) else None


def utterance(text: str, metadata: Mapping[str, Any] | None) -> str:
    """``text`` without the ``"Speaker: "`` prefix its metadata's speaker put in front."""
    speaker = speaker_of(metadata)
    if speaker is None:
        return text
    prefix = speaker + _SEPARATOR
    bare = text[len(prefix) :] if text.startswith(prefix) else text
    return bare if bare.strip() else text
