from memory_core.dashboard.buffer import EventBuffer
from memory_core.dashboard.inspector import hits_table, node_details, node_options
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import Relation
from memory_core.testing import ManualClock


def test_details_list_facts_neighbours_and_history(
    atlas: ElasticMemoryAtlas, clock: ManualClock
) -> None:
    buffer = EventBuffer()
    atlas.subscribe(buffer)
    a = atlas.add("the trip is to Munich", session_id="s1")
    b = atlas.add("unrelated words about cats", session_id="s2")
    atlas.link(a.id, b.id, Relation.CAUSAL)
    atlas.retrieve("trip to Munich", 1, session_id="s1")
    clock.advance(3600)
    atlas.decay()
    details = node_details(atlas, a.id, buffer.for_node(a.id))
    assert details.node.id == a.id
    assert {"field": "session", "value": "s1"} in details.facts
    assert [(n["relation"], n["direction"], n["id"]) for n in details.neighbours] == [
        ("causal", "→", b.id)
    ]
    assert [h["event"] for h in details.history] == ["decay", "reinforced", "added"]  # newest first


def test_options_are_heaviest_first(atlas: ElasticMemoryAtlas) -> None:
    light = atlas.add("light", session_id="s", importance=0.0)
    heavy = atlas.add("heavy memory", session_id="t", importance=1.0)
    assert list(node_options(atlas.nodes())) == [heavy.id, light.id]


def test_hits_table_breaks_the_score_down(atlas: ElasticMemoryAtlas) -> None:
    atlas.add("rail over air for every trip", session_id="s")
    rows = hits_table(atlas.retrieve("rail trip", 3, session_id="s"))
    assert rows[0]["rank"] == 1 and {"dense", "lexical", "recency", "weight", "score"} <= set(
        rows[0]
    )
