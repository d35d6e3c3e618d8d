"""What is worth remembering (the first seed's section 4.1): key events, new facts or
instructions, decisions, errors — not greetings and filler. A policy is a typed callable."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from memory_core.engine.importance import information_density

RememberPolicy = Callable[[str, Mapping[str, Any]], bool]

_EVENT = re.compile(
    r"\b(error|failed|exception|crash|decided|decision|agreed|booked|confirmed|cancel(l)?ed|"
    r"deadline|started|finished|completed|prefer|always|never|must|please|remember|budget|"
    r"allergic|switched|changed|instead|actually)\b",
    re.IGNORECASE,
)


def key_information(text: str, metadata: Mapping[str, Any]) -> bool:
    """Keep explicit events and cue phrases, and anything dense enough to be a fact."""
    if metadata.get("remember") is not None:
        return bool(metadata["remember"])
    if _EVENT.search(text):
        return True
    return information_density(text, metadata) >= 0.45


def everything(text: str, metadata: Mapping[str, Any]) -> bool:
    """Keep every turn (the harness's default: forgetting is the atlas's job)."""
    return True


REMEMBER_POLICIES: dict[str, RememberPolicy] = {
    "key-information": key_information,
    "everything": everything,
}
