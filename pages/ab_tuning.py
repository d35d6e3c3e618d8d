"""A/B tuning: placeholder until the tuning issue lands."""

import streamlit as st

from memory_core.config import PRESETS

st.title("A/B tuning")
st.info(
    "Coming with the tuning issue: replay the sample sessions under two parameter sets side by "
    "side (recall of key facts, forgotten-fact leakage, memory size), run Optuna sweeps off the "
    "script thread, and promote the winner to a preset."
)
st.caption("Presets that will be comparable here:")
st.dataframe(
    [
        {
            "preset": name,
            "decay": cfg.decay_strategy,
            "rate": cfg.decay_rate,
            "evict below": cfg.evict_threshold,
        }
        for name, cfg in PRESETS.items()
    ],
    hide_index=True,
)
