"""Who said it: a memory of an utterance carries its speaker in the text that is indexed.

Real questions are about people ("When did Caroline go to the support group?", "what did
the user say about seats"). A speaker kept only in metadata is invisible to both BM25 and
the embedding, so the speaker's name is written in front of the utterance — the one form
that every retriever (lexical, dense, an LLM reading the context) understands without
special handling. The bare utterance stays in ``metadata["speaker"]``'s company for
display and filtering. Harness, agent loop and MCP server all attribute through here.
"""

from __future__ import annotations

SEPARATOR = ": "


def attributed(text: str, speaker: str | None) -> str:
    """``"Speaker: text"``; the text unchanged when there is no speaker or it already says so."""
    name = (speaker or "").strip()
    if not name or text.startswith(name + SEPARATOR):
        return text
    return f"{name}{SEPARATOR}{text}"
