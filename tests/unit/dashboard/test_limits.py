"""One validator per kind of typed value, with the engine's limits, on every page's path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.dashboard.limits import (
    max_text_chars,
    memory_text,
    note_text,
    run_name,
    session_name,
    study_name,
)
from memory_core.dashboard.marking import add_fact, open_upload
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.config import AtlasConfig
from memory_core.errors import InputError, SessionFormatError, UploadError


def test_the_text_limit_is_the_engines() -> None:
    assert max_text_chars() == AtlasConfig().max_content_chars


@given(extra=st.integers(1, 200_000))
@settings(max_examples=20, deadline=None)
def test_too_long_texts_are_refused_with_the_limit_and_a_short_quote(extra: int) -> None:
    text = "x" * (max_text_chars() + extra)
    for check, field in ((memory_text, "probe"), (note_text, "note")):
        with pytest.raises(InputError) as caught:
            check(text, field)
        message = str(caught.value)
        assert message.startswith(f"{field}: has {len(text):,} characters; at most ")
        assert f"at most {max_text_chars():,} allowed" in message and len(message) < 220


def test_blank_and_fitting_texts() -> None:
    assert memory_text("  a probe  ", "probe") == "a probe"
    assert note_text("   ") is None and note_text(None) is None
    with pytest.raises(InputError, match="probe: must not be empty"):
        memory_text(" ", "probe")


@pytest.mark.parametrize(
    "name", ["", "   ", "<script>x</script>", "a>b", "x" * 201, "tab\there", "\u202eevil", "a\nb"]
)
def test_one_session_name_rule_everywhere(name: str, atlas: ElasticMemoryAtlas) -> None:
    for check in (session_name, study_name, run_name):
        with pytest.raises(InputError) as caught:
            check(name)
        assert "1 to 200 printable characters" in str(caught.value)
        assert len(str(caught.value)) < 200
    with pytest.raises(InputError):  # the engine itself agrees
        atlas.add("a memory", session_id=name)


def test_ordinary_names_pass() -> None:
    assert session_name("  trip planning 2026 ") == "trip planning 2026"
    assert study_name("dashboard-20260102-030405") == "dashboard-20260102-030405"


def _conversation_bytes(probe: str) -> bytes:
    import json

    return json.dumps(
        {
            "format": "atlas-session/1",
            "id": "c1",
            "title": "t",
            "sessions": [
                {
                    "id": "s1",
                    "started_at": "2024-07-21T09:00:00+02:00",
                    "turns": [
                        {
                            "id": "t1",
                            "speaker": "user",
                            "text": "The budget is 5000 euros.",
                            "at": "2024-07-21T09:00:00+02:00",
                        }
                    ],
                }
            ],
            "key_facts": [{"id": "k1", "fact": "budget", "evidence": ["t1"], "probe": probe}],
        }
    ).encode()


def test_mark_key_facts_refuses_a_probe_the_engine_would_refuse() -> None:
    (conversation,) = open_upload("c.json", _conversation_bytes("What is the budget?"))
    long = "why?" * 25_000  # 100,000 characters
    with pytest.raises(SessionFormatError) as caught:
        add_fact(conversation, evidence=["t1"], fact="budget", probe=long)
    (problem,) = caught.value.problems
    assert "$.key_facts[1].probe: has 100,000 characters; at most 8,000 allowed" in problem
    assert len(problem) < 250
    with pytest.raises(SessionFormatError, match=r"\$\.key_facts\[0\]\.probe"):
        open_upload("c.json", _conversation_bytes(long))


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"[" * 10_000 + b"]" * 10_000, "nests 10,000 levels deep"),
        (b"", "is empty"),
        (bytes(range(256)) * 4, "binary"),
        ('{"a": 1}'.encode("utf-16"), "UTF-16"),
    ],
)
def test_conversation_uploads_pass_the_shared_reader_first(data: bytes, says: str) -> None:
    with pytest.raises(UploadError, match=says) as caught:
        open_upload("mine.json", data)
    assert str(caught.value).startswith("mine.json: ")
