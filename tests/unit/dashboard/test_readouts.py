"""Read-outs that must agree with the atlas (issue #29 point 8): labels on small graphs,
link counts, one history row per decay second, gaps in the weight chart, memories under
the eviction line explained, the tuner's pages on Home."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from memory_core.dashboard.graph_view import build_graph
from memory_core.dashboard.home import AUDIENCES
from memory_core.dashboard.inspector import merged_decays
from memory_core.dashboard.weights import below_line_note, evolution_figure, with_gaps
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import Relation
from memory_core.testing import HashingEmbedder, ManualClock

TEXTS = (
    "User prefers window seats on flights",
    "The trip budget is 5000 euros",
    "Hotel in Munich booked for three nights",
    "Train from Berlin leaves at 9:40",
    "Wife is vegetarian",
    "Meeting with Anna on Tuesday",
    "Car rental needed in Lisbon",
    "Flight number LH 1234",
    "Passport expires in March",
    "Conference fee is 450 euros",
    "Prefers aisle seats on trains",
    "Dinner reservation at 8pm",
)


def test_a_small_graph_shows_most_of_its_labels(atlas: ElasticMemoryAtlas) -> None:
    for text in TEXTS:
        atlas.add(text, session_id="s")
    view = build_graph(atlas.nodes(), atlas.edges())
    assert len(view.drawn) == 12
    assert view.labelled >= 10, f"only {view.labelled} of 12 labels drawn"  # was 1 of 12
    few = build_graph(atlas.nodes()[:5], atlas.edges())
    assert few.labelled == 5


def test_links_caption_says_why_it_exceeds_the_pair_counter(atlas: ElasticMemoryAtlas) -> None:
    a = atlas.add(TEXTS[0], session_id="s")
    b = atlas.add(TEXTS[1], session_id="s")  # a 'before' edge a -> b
    atlas.link(a.id, b.id, Relation.RELATED_TO, 0.5)  # a second relation on the same pair
    view = build_graph(atlas.nodes(), atlas.edges())
    assert atlas.stats()["edges"] == view.linked_pairs == 1 and view.edge_count == 2
    assert view.links_text.startswith("2 links between 1 pair (a pair can hold two")
    alone = build_graph(atlas.nodes()[:1], atlas.edges())
    assert alone.links_text == "0 links"


def test_decay_passes_of_one_second_are_one_history_row() -> None:
    t = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = t.replace(microsecond=500_000)
    rows = [
        {"at": t, "event": "added", "detail": "stored"},
        {"at": t, "event": "decay", "detail": "decayed to 0.800"},
        {"at": later, "event": "decay", "detail": "decayed to 0.700"},
        {"at": t.replace(second=5), "event": "decay", "detail": "decayed to 0.600"},
    ]
    merged = merged_decays(rows)
    assert [r["detail"] for r in merged] == [
        "stored",
        "decayed to 0.700 (2 passes this second)",
        "decayed to 0.600",
    ]


def test_a_skipped_year_breaks_the_weight_lines() -> None:
    hours = [0, 1, 2, 3, 4, 8764, 8765]
    frame = pd.DataFrame(
        {
            "at": [datetime(2026, 1, 1, tzinfo=UTC) + pd.Timedelta(hours=h) for h in hours],
            "nodes": 3,
            "mean": 0.5,
            "min": 0.2,
            "max": 0.9,
            "p10": 0.3,
            "p50": 0.5,
            "p90": 0.8,
        }
    )
    broken, gaps = with_gaps(frame)
    assert gaps == 1 and len(broken) == len(frame) + 1
    assert broken["mean"].isna().sum() == 1  # the empty row sits inside the gap
    gap_row = broken[broken["mean"].isna()].iloc[0]
    assert frame["at"].iloc[4] < gap_row["at"] < frame["at"].iloc[5]
    figure = evolution_figure(frame)
    mean = next(t for t in figure.data if t.name == "mean")
    assert any(pd.isna(y) for y in mean.y) and "markers" in mean.mode
    assert with_gaps(frame.iloc[:5])[1] == 0


def test_memories_under_the_line_say_why_they_stay(clock: ManualClock) -> None:
    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder(), clock=clock)
    pinned = atlas.add(TEXTS[0], session_id="s", pinned=True)
    atlas.add(TEXTS[1], session_id="s")
    nodes = atlas.nodes()
    note = below_line_note(nodes, threshold=5.0, working=[])
    assert note is not None and note.startswith("2 of 2 memories are below the eviction line")
    assert "1 pinned (never evicted)" in note and "1 wait for the next decay pass" in note
    other = next(n for n in nodes if n.id != pinned.id)
    assert "1 in a session's working memory" in (below_line_note(nodes, 5.0, [other.id]) or "")
    assert below_line_note(nodes, threshold=0.0) is None


def test_home_sends_tuners_to_mark_key_facts_first() -> None:
    tuner = next(a for a in AUDIENCES if a.who == "Tuner")
    assert [page for page, _ in tuner.pages][:2] == ["pages/key_facts.py", "pages/ab_tuning.py"]
