import pytest

from memory_core.errors import ConfigError
from memory_core.knowledge import KnowledgeSettings, SourceKind


def test_defaults_are_the_seed_numbers() -> None:
    s = KnowledgeSettings()
    assert s.wrong_threshold == 3
    assert s.min_similarity == 0.3
    assert s.episode_pending_timeout_s == 300
    assert (s.retention_initial, s.retention_use_bonus) == (1.0, 0.1)
    assert (s.retention_monthly_decay, s.retention_archive_threshold) == (0.2, 0.3)


def test_source_weight_named_override_beats_kind() -> None:
    s = KnowledgeSettings(source_weights={"GOV_LAW": 1.2})
    assert s.source_weight("GOV_LAW", SourceKind.SECOND_PARTY_DOCUMENT) == 1.2
    assert s.source_weight("Wiki", SourceKind.SECOND_PARTY_DOCUMENT) == 0.8
    assert s.source_weight("HR_API", SourceKind.FIRST_PARTY_SYSTEM) == 1.0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("wrong_threshold", 0),
        ("min_similarity", 2.0),
        ("low_confidence", -0.1),
        ("month_days", 0.0),
        ("stale_days", float("nan")),
        ("source_weights", {"X": -1.0}),
    ],
)
def test_bad_values_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        KnowledgeSettings(**{field: value})  # type: ignore[arg-type]
    assert field.split("[")[0] in info.value.field


def test_kind_weights_must_cover_every_kind() -> None:
    with pytest.raises(ConfigError, match="missing learned_from_episode"):
        KnowledgeSettings(
            kind_weights={SourceKind.FIRST_PARTY_SYSTEM: 1.0, SourceKind.SECOND_PARTY_DOCUMENT: 1.0}
        )
