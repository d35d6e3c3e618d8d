from memory_core.dashboard.state import AtlasSource, DashboardState, Keys
from memory_core.engine.model import MemoryKind


def test_state_reads_typed_values_from_a_plain_mapping() -> None:
    store: dict[str, object] = {}
    state = DashboardState(store)
    assert state.source is AtlasSource.LIVE and not state.node_filter.active
    store.update({Keys.SESSIONS: ["s1"], Keys.KINDS: ["episodic", "gone"], Keys.MIN_WEIGHT: 0.5})
    flt = state.node_filter
    assert flt.sessions == ("s1",) and flt.kinds == (MemoryKind.EPISODIC,) and flt.min_weight == 0.5
    state.add_chat("user", "hi")
    state.eviction_page = -3
    assert [c.text for c in state.chat] == ["hi"] and state.eviction_page == 0
    assert state.playground_session == "playground"
