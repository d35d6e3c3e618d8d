"""AtlasConfig: validation names the field, presets are valid, TOML and overrides round-trip."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from memory_core.engine.config import (
    PRESETS,
    AtlasConfig,
    coerce_value,
    field_names,
    field_specs,
    parse_literal,
    preset,
)
from memory_core.errors import ConfigError


def test_defaults_are_valid_and_frozen() -> None:
    cfg = AtlasConfig()
    assert cfg.max_nodes == 10_000
    assert cfg.weight_floor <= cfg.base_weight_min <= cfg.base_weight_max <= cfg.weight_cap
    with pytest.raises(FrozenInstanceError):
        cfg.max_nodes = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("decay_rate", -0.1, "[0.0, 100.0]"),
        ("decay_rate", math.nan, "finite"),
        ("link_threshold", 1.5, "[0.0, 1.0]"),
        ("merge_threshold", -0.01, "[0.0, 1.0]"),
        ("max_nodes", 0, "[1, inf]"),
        ("max_nodes", 2.5, "integer"),
        ("working_memory_size", True, "integer"),
        ("weight_cap", "3", "number"),
        ("reinforce_factor", 0.5, "[1.0, 10.0]"),
        ("decay_strategy", "cubic", "linear, exponential, ebbinghaus, power"),
        ("session_end_mode", "drop", "keep, fade, purge, summarize"),
        ("link_previous", 1, "true or false"),
        ("recency_half_life_hours", 0.0, "[1e-06, inf]"),
        ("decay_interval_seconds", math.inf, "finite"),
        ("max_content_chars", None, "must not be None"),
    ],
)
def test_bad_field_is_named_with_allowed_range(field: str, value: object, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        AtlasConfig(**{field: value})  # type: ignore[arg-type]
    assert info.value.field == field
    assert fragment in str(info.value)
    assert field in str(info.value)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"weight_floor": 2.0, "weight_cap": 1.0, "base_weight_max": 1.0}, "weight_floor"),
        ({"base_weight_min": 1.2, "base_weight_max": 1.0}, "base_weight_min"),
        ({"base_weight_max": 4.0, "weight_cap": 3.0}, "base_weight_max"),
        ({"evict_threshold": 5.0, "weight_cap": 3.0}, "evict_threshold"),
        (
            {"similarity_weight": 0.0, "weight_weight": 0.0, "recency_weight": 0.0},
            "similarity_weight",
        ),
    ],
)
def test_cross_field_rules(values: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        AtlasConfig(**values)  # type: ignore[arg-type]
    assert info.value.field == field


def test_optional_fields_accept_none() -> None:
    cfg = AtlasConfig(max_nodes=None, default_ttl_hours=None)
    assert cfg.max_nodes is None


def test_every_preset_is_a_valid_config() -> None:
    assert set(PRESETS) >= {"seed-linear", "exponential", "ebbinghaus", "power-law", "tuned"}
    for name, cfg in PRESETS.items():
        assert preset(name) is cfg
        assert AtlasConfig.from_mapping(cfg.to_dict()) == cfg
    seed = preset("seed-linear")
    assert (seed.decay_strategy, seed.decay_rate, seed.reinforce_factor) == ("linear", 0.05, 1.2)
    assert (seed.weight_cap, seed.weight_floor, seed.evict_threshold) == (3.0, 0.1, 0.15)


def test_unknown_preset_lists_known_names() -> None:
    with pytest.raises(ConfigError, match="seed-linear"):
        preset("nope")


def test_from_mapping_refuses_unknown_keys_and_coerces_ints() -> None:
    with pytest.raises(ConfigError) as info:
        AtlasConfig.from_mapping({"max_node": 5})
    assert info.value.field == "max_node"
    assert "max_nodes" in str(info.value)
    cfg = AtlasConfig.from_mapping({"decay_rate": 1, "max_nodes": 7})
    assert isinstance(cfg.decay_rate, float)
    assert cfg.decay_rate == 1.0
    assert cfg.max_nodes == 7
    assert coerce_value("weight_cap", 2) == 2.0
    assert coerce_value("weight_cap", True) is True  # left for validation to reject


def test_toml_round_trip(tmp_path: Path) -> None:
    cfg = AtlasConfig(decay_strategy="power", decay_rate=0.7, max_nodes=42, link_previous=False)
    path = tmp_path / "atlas.toml"
    path.write_text(cfg.to_toml(), encoding="utf-8")
    assert AtlasConfig.from_toml(path) == cfg


def test_toml_round_trip_keeps_unlimited_capacity(tmp_path: Path) -> None:
    cfg = AtlasConfig(max_nodes=None)
    path = tmp_path / "atlas.toml"
    path.write_text(cfg.to_toml(), encoding="utf-8")
    assert AtlasConfig.from_toml(path) == cfg


def test_toml_preset_base_and_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[atlas]\npreset = "seed-linear"\ndecay_rate = 0.1\n', encoding="utf-8")
    cfg = AtlasConfig.from_toml(path)
    assert cfg.decay_strategy == "linear"
    assert cfg.decay_rate == 0.1
    bad = tmp_path / "bad.toml"
    bad.write_text("decay_rate = = 1", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a readable TOML"):
        AtlasConfig.from_toml(bad)
    with pytest.raises(ConfigError):
        AtlasConfig.from_toml(tmp_path / "missing.toml")


def test_command_line_overrides() -> None:
    cfg = AtlasConfig().with_overrides(["max_nodes=none", "decay_strategy=linear", "seed = 3"])
    assert cfg.max_nodes is None
    assert cfg.decay_strategy == "linear"
    assert cfg.seed == 3
    with pytest.raises(ConfigError, match="key=value"):
        AtlasConfig().with_overrides(["max_nodes"])
    assert parse_literal("0.5") == 0.5
    assert parse_literal("true") is True
    assert parse_literal("hello") == "hello"
    assert parse_literal("NULL") is None


def test_field_specs_describe_every_field() -> None:
    specs = field_specs()
    assert [s["name"] for s in specs] == [f.name for f in fields(AtlasConfig)]
    assert field_names() == {s["name"] for s in specs}
    for spec in specs:
        assert spec["group"]
        assert spec["doc"]
    by_name = {s["name"]: s for s in specs}
    assert by_name["link_threshold"]["low"] == 0.0
    assert by_name["link_threshold"]["high"] == 1.0
    assert by_name["max_nodes"]["default"] == 10_000


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("max_content_chars", "many", "an integer in [1, 1000000]"),
        ("max_content_chars", 10**400, "must be in [1, 1000000]"),  # no float overflow
        ("weight_cap", [3], "a number in [0.0, 100.0]"),
    ],
)
def test_type_errors_state_the_range_too(field: str, value: object, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        AtlasConfig(**{field: value})  # type: ignore[arg-type]
    assert info.value.field == field and fragment in str(info.value)


def test_allowed_text_of_specs() -> None:
    allowed = {s["name"]: s["allowed"] for s in field_specs()}
    assert allowed["max_nodes"] == "[1, inf] or none"
    assert allowed["link_previous"] == "true / false"
    assert allowed["decay_strategy"] == "linear / exponential / ebbinghaus / power"
