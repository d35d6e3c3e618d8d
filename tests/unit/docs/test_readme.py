"""The README's configuration table is generated; it must match the dataclass."""

from pathlib import Path

from memory_core.cli.config import markdown_table

ROOT = Path(__file__).resolve().parents[3]


def test_readme_config_table_matches_config_fields() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("<!-- config-table:start -->") + len("<!-- config-table:start -->")
    end = text.index("<!-- config-table:end -->")
    assert text[start:end].strip() == markdown_table().strip(), (
        "README config table is stale: regenerate it with `atlas config --markdown`"
    )


def test_readme_quick_start_has_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run" in text and "make test" in text
