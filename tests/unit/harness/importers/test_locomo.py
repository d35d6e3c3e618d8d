"""LoCoMo importer: both published layouts, evidence cleaning, category 5, and bad input."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_core.harness.importers import IMPORTERS, ImportOptions, import_files
from memory_core.harness.importers.locomo import category

from .conftest import convert, problem, write

DEV = Path(__file__).resolve().parents[5] / "shared" / "datasets" / "locomo-dev"


def sample() -> dict[str, Any]:
    """A two-session conversation in the per-conversation layout of the dev files."""
    return {
        "speaker_a": "Zoë",
        "speaker_b": "Mark",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Zoë", "dia_id": "D1:1", "text": "I adopted a dog last week!"},
            {
                "speaker": "Mark",
                "dia_id": "D1:2",
                "text": "Look at this.",
                "img_url": ["https://example.org/x.jpg"],
                "blip_caption": "a photo of a dog by a mural",
                "query": "dog mural",
            },
            {"speaker": "Zoë", "dia_id": "D1:3", "text": "I run 5 km every morning."},
        ],
        "session_2_date_time": "9:05 am on 2 June, 2023",
        "session_2": [
            {"speaker": "Mark", "dia_id": "D2:1", "text": "How is the dog?"},
            {"speaker": "Zoë", "dia_id": "D2:2", "text": "Great, she is called Pixel."},
        ],
        "session_3_date_time": "10:00 am on 3 July, 2023",  # a date without a session: ignored
        "qa": [
            {"question": "What pet did Zoë adopt?", "answer": "a dog", "evidence": ["D1:1"], "category": 4},
            {"question": "How far does Zoë run?", "answer": 5, "evidence": ["D1:3", "D1:3", "D9:9"], "category": 1},
            {"question": "What is the dog's name?", "answer": "Pixel", "evidence": ["D2:2"], "category": 2},
            {"question": "What did Mark share?", "answer": "a photo", "evidence": ["D8:6; D9:17"], "category": 3},
            {"question": "What did Mark adopt?", "adversarial_answer": "a dog", "evidence": ["D1:1"], "category": 5},
        ],
        "observation": {"ignored": True},
    }  # fmt: skip


def test_per_conversation_file(tmp_path: Path) -> None:
    [(item, conv)] = convert("locomo", write(tmp_path, "26.json", sample()))
    assert conv.id == "locomo-26" and conv.title == "LoCoMo 26: Zoë and Mark"
    assert [s.id for s in conv.sessions] == ["s1", "s2"]
    assert conv.sessions[0].started_at == pytest.approx(1683554160.0)  # 2023-05-08 13:56 UTC
    first = conv.sessions[0].turns[0]
    assert (first.id, first.speaker) == ("D1:1", "Zoë")  # display names kept as said
    assert (
        conv.turn_by_id("D1:2").text
        == "Look at this. [shares a photo: a photo of a dog by a mural]"
    )
    facts = {f.id: f for f in conv.key_facts}
    assert list(facts) == ["qa0-cat4", "qa1-cat1", "qa2-cat2"]
    assert facts["qa1-cat1"].fact == "5" and facts["qa1-cat1"].evidence == ("D1:3",)
    assert facts["qa0-cat4"].probe == "What pet did Zoë adopt?"
    assert (item.dropped_evidence, item.dropped_facts, item.unanswerable) == (3, 1, 1)
    assert item.warning() == (
        f"{tmp_path / '26.json'}: dropped 3 duplicate or unknown evidence id(s) "
        "and 1 question(s) left without evidence"
    )
    assert [category(f.id) for f in conv.key_facts] == [4, 1, 2]
    assert category("kf1") is None


def test_locomo10_list_layout_uses_sample_ids(tmp_path: Path) -> None:
    inner = sample()
    qa = inner.pop("qa")
    other = copy.deepcopy(inner)
    other["speaker_a"] = "Ann"
    for turn in other["session_1"] + other["session_2"]:
        turn["speaker"] = turn["speaker"].replace("Zoë", "Ann")
    data = [
        {"sample_id": "conv-26", "conversation": inner, "qa": qa, "event_summary": {}},
        {"sample_id": "conv-30", "conversation": other, "qa": qa[:1]},
    ]
    converted = convert("locomo", write(tmp_path, "locomo10.json", data))
    assert [conv.id for _, conv in converted] == ["locomo-conv-26", "locomo-conv-30"]
    assert [len(conv.key_facts) for _, conv in converted] == [3, 1]
    assert converted[1][0].source == f"{tmp_path / 'locomo10.json'} $[1]"
    assert converted[1][1].sessions[0].turns[0].speaker == "Ann"


def test_locomo10_items_without_sample_id_are_numbered(tmp_path: Path) -> None:
    inner = sample()
    qa = inner.pop("qa")
    data = [{"conversation": inner, "qa": qa}, {"conversation": inner, "qa": []}]
    converted = convert("locomo", write(tmp_path, "locomo10.json", data))
    assert [conv.id for _, conv in converted] == ["locomo-locomo10-0", "locomo-locomo10-1"]


def test_one_sample_object_alone(tmp_path: Path) -> None:
    inner = sample()
    data = {"sample_id": "conv-7", "qa": inner.pop("qa"), "conversation": inner}
    [(_, conv)] = convert("locomo", write(tmp_path, "x.json", data))
    assert conv.id == "locomo-conv-7" and len(conv.key_facts) == 3


def test_unanswerable_questions_only_on_request(tmp_path: Path) -> None:
    path = write(tmp_path, "26.json", sample())
    [(item, conv)] = convert("locomo", path, include_unanswerable=True)
    fact = conv.key_facts[-1]
    assert fact.id == "qa4-cat5" and category(fact.id) == 5
    assert fact.evidence == ("D1:1",) and fact.probe == "What did Mark adopt?"
    assert fact.fact.startswith("Unanswerable as asked") and "a dog" in fact.fact
    assert item.unanswerable == 1


def test_sessions_are_in_number_order_and_nudged_past_overlaps(tmp_path: Path) -> None:
    data = sample()
    data["session_10"] = data.pop("session_2")  # 10 sorts after 2 as a number, not as text
    data["session_10_date_time"] = data.pop("session_2_date_time")
    data["session_2"] = [{"speaker": "Mark", "dia_id": "D5:1", "text": "One more thing."}]
    data["session_2_date_time"] = "1:56 pm on 8 May, 2023"  # same minute as session 1
    data["qa"] = data["qa"][:1]
    [(_, conv)] = convert("locomo", write(tmp_path, "a.json", data))
    assert [s.turns[0].id for s in conv.sessions] == ["D1:1", "D5:1", "D2:1"]
    assert conv.sessions[1].started_at == conv.sessions[0].started_at + 60.0  # after 3 turns


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def mutate(doc: Any) -> None:
        for part in path[:-1]:
            doc = doc[part]
        doc[path[-1]] = value

    return mutate


def _delete(path: tuple[Any, ...]) -> Callable[[Any], None]:
    def mutate(doc: Any) -> None:
        for part in path[:-1]:
            doc = doc[part]
        del doc[path[-1]]

    return mutate


BAD: list[tuple[str, Callable[[Any], None], str]] = [
    ("missing qa", _delete(("qa",)), "$: missing field 'qa'"),
    ("qa not a list", _set(("qa",), {"q": 1}), "$.qa: expected a list, got an object"),
    ("evidence not a list", _set(("qa", 3, "evidence"), "D1:1"), "$.qa[3].evidence: expected a list, got a string ('D1:1')"),
    ("evidence not strings", _set(("qa", 0, "evidence"), [1]), "$.qa[0].evidence[0]: expected a turn id string, got a number (1)"),
    ("bad category", _set(("qa", 2, "category"), 6), "$.qa[2].category: expected one of [1, 2, 3, 4, 5], got a number (6)"),
    ("category as text", _set(("qa", 2, "category"), "2"), "$.qa[2].category: expected one of [1, 2, 3, 4, 5], got a string ('2')"),
    ("missing answer", _delete(("qa", 0, "answer")), "$.qa[0]: missing field 'answer'"),
    ("null answer", _set(("qa", 0, "answer"), None), "$.qa[0].answer: expected a string, got null"),
    ("blank question", _set(("qa", 1, "question"), " "), "$.qa[1].question: expected a non-empty string"),
    ("missing date", _delete(("session_2_date_time",)), "$: missing field 'session_2_date_time'"),
    ("unparsable date", _set(("session_1_date_time",), "May 8th 2023"), "$.session_1_date_time: 'May 8th 2023' is not a LoCoMo date like '1:56 pm on 8 May, 2023'"),
    ("unknown month", _set(("session_1_date_time",), "1:56 pm on 8 Maytember, 2023"), "$.session_1_date_time: '1:56 pm on 8 Maytember, 2023' is not a LoCoMo date"),
    ("impossible day", _set(("session_1_date_time",), "1:56 pm on 31 June, 2023"), "$.session_1_date_time: '1:56 pm on 31 June, 2023' is not a real date and time"),
    ("24-hour time", _set(("session_1_date_time",), "13:56 pm on 8 May, 2023"), "$.session_1_date_time: '13:56 pm on 8 May, 2023' has hour 13"),
    ("sessions out of order", _set(("session_2_date_time",), "9:05 am on 2 April, 2023"), "$.session_2_date_time: session date 2023-04-02T09:05:00+00:00 is before the previous session's date"),
    ("session not a list", _set(("session_1",), "hello"), "$.session_1: expected a list, got a string ('hello')"),
    ("empty session", _set(("session_2",), []), "$.session_2: expected a non-empty list of turns"),
    ("turn without dia_id", _delete(("session_1", 0, "dia_id")), "$.session_1[0]: missing field 'dia_id'"),
    ("dia_id with a space", _set(("session_1", 0, "dia_id"), "D1 1"), "$.session_1[0].dia_id: id 'D1 1' is not 1 to 128 letters"),
    ("text wrong type", _set(("session_2", 1, "text"), 7), "$.session_2[1].text: expected a string, got a number (7)"),
    ("blank text without photo", _set(("session_2", 1, "text"), ""), "$.session_2[1].text: expected the turn's words"),
    ("speaker with a symbol", _set(("session_1", 0, "speaker"), "Zoë!"), "$.session_1[0].speaker: speaker 'Zoë!' is not a name"),
    ("no speaker_b", _delete(("speaker_b",)), "$: missing field 'speaker_b'"),
]  # fmt: skip


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_names_file_path_and_expectation(
    tmp_path: Path, mutate: Callable[[Any], None], expected: str
) -> None:
    doc = sample()
    mutate(doc)
    path = write(tmp_path, "26.json", doc)
    assert problem("locomo", path).startswith(f"{path}: {expected}")


def test_duplicate_dia_id(tmp_path: Path) -> None:
    doc = sample()
    doc["session_2"][0]["dia_id"] = "D1:1"
    path = write(tmp_path, "a.json", doc)
    assert problem("locomo", path) == (
        f"{path}: $.session_2[0].dia_id: duplicate dia_id 'D1:1'; turn ids must be unique"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"messages": []}, "$: expected a LoCoMo conversation"),
        ([], "$: expected a LoCoMo conversation (an object with speaker_a"),
        ("[1]", "$[0]: expected an object with field 'conversation', got a number (1)"),
        ('[{"sample_id": "x"}]', "$[0]: missing field 'conversation'"),
        ("{not json", "line 1: column 2: invalid JSON"),
        ('{"speaker_a": NaN}', "$: invalid JSON: 'NaN is not allowed"),
    ],
)
def test_wrong_layout(tmp_path: Path, content: Any, expected: str) -> None:
    path = write(tmp_path, "x.json", content)
    assert problem("locomo", path).startswith(f"{path}: {expected}")


def test_locomo10_nested_paths(tmp_path: Path) -> None:
    inner = sample()
    qa = inner.pop("qa")
    qa[3]["evidence"] = "D1:1"
    inner["session_2"][1]["speaker"] = None
    path = write(tmp_path, "locomo10.json", [{"sample_id": "a", "conversation": inner, "qa": qa}])
    assert problem("locomo", path) == (
        f"{path}: $[0].conversation.session_2[1].speaker: expected a string, got null"
    )


@pytest.mark.skipif(not DEV.is_dir(), reason=f"LoCoMo dev split not present at {DEV}")
def test_dev_split_counts() -> None:
    files = sorted(DEV.glob("*.json"))
    converted = import_files(IMPORTERS["locomo"], files, ImportOptions())
    turns = [sum(len(s.turns) for s in conv.sessions) for _, conv in converted]
    assert [p.name for p in files] == ["26.json", "30.json", "41.json", "42.json"]
    assert turns == [419, 369, 663, 629]
    assert [len(conv.sessions) for _, conv in converted] == [19, 19, 32, 29]
    assert sum(len(conv.key_facts) for _, conv in converted) == 581
    assert {t.speaker for _, conv in converted for t in conv.turns()} >= {"Caroline", "Melanie"}
    assert json.dumps(converted[0][0].data)  # plain JSON, ready to write
