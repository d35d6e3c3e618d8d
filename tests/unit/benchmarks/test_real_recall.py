"""``make bench-recall``: the table, the target verdicts and the clean skip (no data needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import real_recall
from benchmarks.real_recall import Cell, check_targets, render


def cells(atlas_none: float, atlas_150: float, retention_150: float) -> list[Cell]:
    out = []
    for budget in real_recall.BUDGETS:
        atlas = {"none": atlas_none, "150": atlas_150, "25%": 0.5}[budget]
        retention = retention_150 if budget == "150" else 1.0
        out.append(Cell("atlas", budget, atlas, retention, 1.0, {1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4}))
        out.append(Cell("hybrid", budget, 0.6, 1.0, 0.2, {4: 0.5}))
    return out


def test_verdicts_name_what_is_met_and_by_how_much_a_target_is_missed() -> None:
    verdicts = check_targets(cells(0.72, 0.55, 0.9))
    assert verdicts[0].endswith("met")
    assert "MISSED by 0.030" in verdicts[1]
    assert verdicts[2].endswith("met")
    assert "atlas >= hybrid at no limit: 0.720" in verdicts[3] and verdicts[3].endswith("met")
    assert "MISSED by 0.050" in verdicts[4]


def test_table_has_a_row_per_policy_and_budget_with_categories() -> None:
    class Conv:
        sessions = ()
        key_facts = ()

    table = render(cells(0.7, 0.6, 0.9), [Conv()])
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 6  # header + 2 policies x 3 budgets
    assert "| **atlas** | no limit | 0.700 | 1.00 | 1.0 | 0.100 | 0.200 | 0.300 | 0.400 |" in rows
    assert "| hybrid | 150 memories | 0.600 |" in table
    assert "nan" in table  # a category with no question says so


def test_without_the_dataset_it_skips_cleanly(tmp_path: Path, capsys) -> None:
    assert real_recall.main(["--data", str(tmp_path / "absent")]) == 0
    assert "skipped" in capsys.readouterr().out


def test_the_doc_block_is_replaced_between_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "harness.md"
    doc.write_text(f"intro\n{real_recall.START}\nold\n{real_recall.END}\noutro\n")
    real_recall.write_doc(doc, "new table")
    assert doc.read_text() == f"intro\n{real_recall.START}\nnew table\n{real_recall.END}\noutro\n"
    doc.write_text("no markers")
    with pytest.raises(SystemExit):
        real_recall.write_doc(doc, "x")


def test_both_documents_carry_the_markers() -> None:
    for doc in real_recall.DOCS:
        text = doc.read_text(encoding="utf-8")
        assert real_recall.START in text and real_recall.END in text, doc
