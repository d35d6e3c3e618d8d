import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memory_core.errors import InputError
from memory_core.knowledge import ItemStatus, KnowledgeBase, import_file
from memory_core.knowledge.importer import csv_columns

from .conftest import record

HEADER = (
    "key,content,source_kind,source_name,version,effective_from,expires_at,confidence,verifiable"
)


def _csv(tmp_path: Path, *rows: str, header: str = HEADER) -> Path:
    path = tmp_path / "items.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_csv_valid_rows_imported_invalid_rows_reported(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "policy.a,Five days of leave,first_party_system,HR_API,1.0,2024-01-01,,0.9,yes",
        "policy.b,,first_party_system,HR_API,1.0,2024-01-01,,high,yes",
        "policy.c,Rail cap 600,second_party_document,Handbook,2.0,2024-01-01,2023-01-01,0.8,maybe",
        '"policy.d","Quoted, with comma",second_party_document,Handbook,1,2024-01-01,,,',
    )
    report = import_file(kb, path, actor="bulk")
    assert [i.key for i in report.imported] == ["policy.a", "policy.d"]
    assert report.imported[1].content == "Quoted, with comma"
    assert report.rejected_rows == [2, 3]
    by_row = {(e.row, e.field) for e in report.errors}
    assert {(2, "content"), (2, "confidence"), (3, "verifiable")} <= by_row
    with kb.unit() as unit:
        keys = [i.key for i in unit.items.items()]
        log = unit.items.audit_log()
    assert keys == ["policy.a", "policy.d"]  # nothing of rows 2 and 3 was written
    assert {e.actor for e in log} == {"bulk"}


def test_rule_problems_are_row_errors_too(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "policy.a,Text,first_party_system,HR_API,2.0,2024-01-01,,0.9,",
        "policy.a,Older text,first_party_system,HR_API,1.0,2024-01-01,,0.9,",
        "policy.e,Text,first_party_system,HR_API,1.0,2024-05-01,2024-04-01,0.9,",
    )
    report = import_file(kb, path)
    assert [i.version for i in report.imported] == ["2.0"]
    assert [(e.row, e.field) for e in report.errors] == [(2, "version"), (3, "expires_at")]
    assert "row 2: version: must be greater" in str(report.errors[0])


def test_checklist_columns_are_collected(kb: KnowledgeBase, tmp_path: Path) -> None:
    header = "key,content,source_kind,source_name,version,effective_from,used_often,clear_validity"
    path = _csv(tmp_path, "k,Text,first_party_system,HR_API,1,2024-01-01,no,", header=header)
    report = import_file(kb, path)
    assert report.imported == []
    assert [(e.row, e.field) for e in report.errors] == [(1, "checklist.used_often")]


def test_json_list_and_items_object(make_kb: Callable[..., KnowledgeBase], tmp_path: Path) -> None:
    kb = make_kb(trusted_sources=frozenset({"HR_API"}))
    path = tmp_path / "items.json"
    path.write_text(
        json.dumps(
            {
                "items": [
                    record(key="a", data={"days": 5}, checklist={"used_often": True}),
                    "not an object",
                    record(key="b", confidence="high"),
                ]
            }
        ),
        encoding="utf-8",
    )
    report = import_file(kb, path)
    assert [(i.key, i.status) for i in report.imported] == [("a", ItemStatus.ACTIVE)]
    assert report.imported[0].data == {"days": 5}
    assert [(e.row, e.field) for e in report.errors] == [(2, "item"), (3, "confidence")]
    path.write_text(json.dumps([record(key="c")]), encoding="utf-8")
    assert [i.key for i in import_file(kb, path).imported] == ["c"]


@pytest.mark.parametrize(
    ("name", "text", "field"),
    [
        ("bad.json", "{not json", "line 1"),
        ("bad.json", '{"rows": []}', "$"),
        ("items.xml", "<x/>", "file"),
        ("items.csv", "key,colour\nk,red\n", "columns"),
    ],
)
def test_file_level_problems_import_nothing(
    kb: KnowledgeBase, tmp_path: Path, name: str, text: str, field: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        import_file(kb, path)
    assert info.value.field == field
    with kb.unit() as unit:
        assert unit.items.items() == []


def test_missing_file(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        import_file(kb, tmp_path / "absent.csv")


def test_csv_columns_follow_the_schema() -> None:
    assert set(HEADER.split(",")) <= set(csv_columns())
    assert "checklist" not in csv_columns() and "used_often" in csv_columns()
