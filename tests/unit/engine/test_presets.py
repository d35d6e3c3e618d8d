"""Every preset says in one line what traffic it suits (issue #25 point 5)."""

from __future__ import annotations

import pytest

from memory_core.cli import main
from memory_core.dashboard.demo import LIVE_PRESETS, preset_description
from memory_core.engine.config import PRESET_DESCRIPTIONS, PRESETS


def test_each_preset_has_one_line_and_the_default_names_tool_output_and_logs() -> None:
    assert set(PRESET_DESCRIPTIONS) == set(PRESETS)
    for text in PRESET_DESCRIPTIONS.values():
        assert "\n" not in text and 30 < len(text) < 240
    assert "tool output" in PRESET_DESCRIPTIONS["tuned"] and "logs" in PRESET_DESCRIPTIONS["tuned"]
    assert all(preset_description(name) for name in LIVE_PRESETS)  # the demo's own too
    assert preset_description("custom") == ""


def test_atlas_config_lists_each_preset_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    for name, text in PRESET_DESCRIPTIONS.items():
        assert f"  {name:12} {text}" in out
