import pytest

from memory_core.dashboard.weights import (
    escape_label,
    evolution_figure,
    evolution_frame,
    histogram_figure,
    scatter_figure,
    weight_frame,
)
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import DecayApplied
from memory_core.engine.model import MemoryKind
from memory_core.errors import InputError
from memory_core.testing import EventRecorder, ManualClock


def test_frame_has_age_and_kind(atlas: ElasticMemoryAtlas, clock: ManualClock) -> None:
    atlas.add("one fact", session_id="s1")
    clock.advance(7200)
    atlas.add("another fact entirely", session_id="s2", kind=MemoryKind.EPISODIC)
    frame = weight_frame(atlas.nodes(), clock.now())
    assert list(frame["age_hours"].round(3)) == [2.0, 0.0]
    assert list(frame["kind"]) == ["session", "episodic"]


def test_histogram_splits_and_draws_the_threshold(
    atlas: ElasticMemoryAtlas, clock: ManualClock
) -> None:
    atlas.add("<b>bold</b> fact", session_id="s1")
    atlas.add("plain fact", session_id="s2", kind=MemoryKind.EPISODIC)
    frame = weight_frame(atlas.nodes(), clock.now())
    # the engine refuses markup in session ids now; a snapshot from before may hold one
    frame.loc[frame["session_id"] == "s1", "session_id"] = "<i>s</i>"
    fig = histogram_figure(frame, split_by="session", log_y=True, threshold=0.15)
    assert {t.name for t in fig.data} == {"&lt;i&gt;s&lt;/i&gt;", "s2"}  # shown, not interpreted
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.shapes[0].x0 == 0.15
    scatter = scatter_figure(frame, split_by="kind", threshold=0.15)
    texts = [t for trace in scatter.data for t in trace.customdata[:, 0]]
    assert "&lt;b&gt;bold&lt;/b&gt; fact" in texts


def test_evolution_summarises_each_decay_pass(
    atlas: ElasticMemoryAtlas, clock: ManualClock
) -> None:
    recorder = EventRecorder()
    atlas.subscribe(recorder)
    atlas.add_many(["alpha one", "beta two", "gamma three"], session_id="s")
    for _ in range(3):
        clock.advance(3600 * 5)
        atlas.decay()
    decays = [e for e in recorder.of_type("decay") if isinstance(e, DecayApplied)]
    frame = evolution_frame(decays)
    assert len(frame) == 3
    assert (frame["p10"] <= frame["p50"]).all() and (frame["p50"] <= frame["p90"]).all()
    assert frame["mean"].iloc[-1] < frame["mean"].iloc[0]  # weights decay over time
    assert len(evolution_figure(frame, threshold=0.15).data) == 6
    assert len(evolution_figure(evolution_frame([])).data) == 0


def test_escape_label() -> None:
    assert escape_label('<a href="x">&</a>') == '&lt;a href="x"&gt;&amp;&lt;/a&gt;'


def test_rejects_unknown_split(atlas: ElasticMemoryAtlas, clock: ManualClock) -> None:
    with pytest.raises(InputError, match="split_by"):
        histogram_figure(weight_frame(atlas.nodes(), clock.now()), split_by="colour")  # type: ignore[arg-type]
