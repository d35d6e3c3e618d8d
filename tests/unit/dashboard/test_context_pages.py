"""The entity view of the live graph page and the review pages' links to context nodes,
in Streamlit's AppTest (hashing embedder, hand-written turn facts: no parser, no model)."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from memory_core.agent.rules import CONTEXT_REVIEW
from memory_core.conflicts.items import ItemDraft, ReviewAction
from memory_core.context.extract.slots import SlotValue
from memory_core.context.extract.turn import EntityMention, TurnFacts
from memory_core.context.model import NodeType, PendingReview
from memory_core.dashboard.conflict_view import desk_for
from memory_core.dashboard.context_live import (
    item_memories,
    live_graphs,
    nodes_behind,
    scope_graph,
    scope_of_node,
    snapshot_sections,
)
from memory_core.dashboard.knowledge_view import open_knowledge
from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.sources import open_snapshot, snapshot_graphs
from memory_core.dashboard.state import AtlasSource, Keys, LoadedAtlas
from memory_core.dashboard.ui.shared import live_system
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.events import RuleFired
from memory_core.engine.snapshot import add_sections
from memory_core.errors import UploadError
from memory_core.knowledge.agent_sinks import knowledge_review
from memory_core.knowledge.items import (
    Checklist,
    Citation,
    CitedBy,
    ItemStatus,
    KnowledgeItem,
    SourceKind,
)
from memory_core.store.context_io import (
    SECTION,
    graph_key,
    graphs_from_section,
    load_graph,
    save_snapshot_with_context,
)
from memory_core.testing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[3]
DAY = 1_721_563_200.0


def facts(intent: str = "state", **fields: object) -> TurnFacts:
    return TurnFacts(
        "", "user", DAY, intent, 1.0,
        fields.pop("goal", None), 0.9 if "goal" in fields else 0.0,  # type: ignore[arg-type]
        tuple(fields.pop("slots", ())), tuple(fields.pop("entities", ())),  # type: ignore[arg-type]
        fields.pop("forget_topic", None),  # type: ignore[arg-type]
    )  # fmt: skip


def talk_about_a_trip(
    system: LiveSystem, session: str = "trip", memories: tuple[str, str, str] = ("m0", "m1", "m2")
) -> None:
    """The hotel limit said, then raised (the first deprecated); a door code forgotten."""
    stage = system.player.rules.context
    assert stage is not None
    ctx = stage.of(session)
    said_in = {"session": session}
    hotel = EntityMention("Hotel Avenida", "hotel")
    first = SlotValue("user", "hotel limit", "150 EUR", "money", 150.0, "EUR", "night")
    ctx.observe(
        facts(goal="book a trip", slots=[first], entities=[hotel]),
        turn=0,
        memory_id=memories[0],
        **said_in,
    )
    raised = SlotValue("user", "hotel limit", "180 EUR", "money", 180.0, "EUR", "night")
    ctx.observe(facts("change", slots=[raised]), turn=1, memory_id=memories[1], **said_in)
    code = SlotValue("user", "door code", "4411", topic="door")
    ctx.observe(facts(slots=[code]), turn=2, memory_id=memories[2], **said_in)
    ctx.observe(facts("forget", forget_topic="door"), turn=3, **said_in)


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AppTest]:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    st.cache_resource.clear()
    yield AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    live_system().close()
    st.cache_resource.clear()


def on_live_graph(at: AppTest, **params: str) -> AppTest:
    at.run()
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page("pages/live_graph.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_entities_view_before_any_talk_says_where_graphs_come_from(app: AppTest) -> None:
    at = on_live_graph(app)
    at.segmented_control(key="graph_view_mode").set_value("entities").run()
    assert not at.exception
    assert any("No task context graph yet" in str(i.value) for i in at.info)


def test_entities_view_shows_the_constraint_in_force_and_what_it_replaced(app: AppTest) -> None:
    app.run()
    talk_about_a_trip(live_system())
    at = on_live_graph(app)
    at.segmented_control(key="graph_view_mode").set_value("entities").run()
    assert not at.exception, [e.value for e in at.exception]
    (table,) = at.dataframe
    rows = table.value.to_dict("records")
    assert [(r["slot"], r["in force"], r["replaced"], r["turns"]) for r in rows] == [
        ("hotel limit", "180 EUR", "150 EUR", "1")
    ]
    caption = next(str(c.value) for c in at.caption if "nodes and" in str(c.value))
    assert "1 forgotten nodes are hidden" in caption
    at.toggle(key="entity_show_forgotten").set_value(True).run()
    caption = next(str(c.value) for c in at.caption if "nodes and" in str(c.value))
    assert "forgotten" not in caption


def test_a_users_graph_names_the_sessions_that_set_and_changed_a_value(app: AppTest) -> None:
    app.run()
    stage = live_system().player.rules.context
    assert stage is not None
    ctx = stage.context("user:ana")
    first = SlotValue("user", "trip budget", "5,000 EUR", "money", 5000.0, "EUR")
    raised = SlotValue("user", "trip budget", "6,000 EUR", "money", 6000.0, "EUR")
    ctx.observe(facts(goal="plan a trip", slots=[first]), turn=0, memory_id="m0", session="s1")
    ctx.observe(facts("change", slots=[raised]), turn=1, memory_id="m1", session="s3")
    at = on_live_graph(app)
    at.segmented_control(key="graph_view_mode").set_value("entities").run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.selectbox(key="entity_session")
    assert picker.value == "user:ana"
    assert picker.format_func(picker.value) == "user ana · sessions s1, s3"
    (table,) = at.dataframe
    rows = table.value.to_dict("records")
    assert [(r["in force"], r["set in"], r["replaced"], r["replaced set in"]) for r in rows] == [
        ("6,000 EUR", "s3", "5,000 EUR", "s1")
    ]


def test_a_link_opens_the_entity_view_focused_on_its_node(app: AppTest) -> None:
    app.run()
    system = live_system()
    talk_about_a_trip(system, session="other")
    talk_about_a_trip(system, session="trip")
    graph = scope_graph(live_graphs(system.player.rules), "session:other")
    assert graph is not None
    node = next(n for n in graph.nodes if n.type == "Constraint" and not n.deprecated)
    at = on_live_graph(app, view="entities", focus=node.id)
    assert at.segmented_control(key="graph_view_mode").value == "entities"
    assert at.selectbox(key="entity_session").value == "session:other"
    assert at.selectbox(key="entity_focus").value == node.id
    at.segmented_control(key="graph_view_mode").set_value("memories").run()  # the link
    assert at.segmented_control(key="graph_view_mode").value == "memories"  # applied once


def test_conflict_review_lists_the_nodes_of_the_pair_with_links(app: AppTest) -> None:
    app.run()
    system = live_system()
    talk_about_a_trip(system)
    desk_for(system.atlas, None).queue.enqueue(
        ItemDraft(
            old_id="m0", old_text="hotel up to 150 EUR", old_session_id="trip",
            new_id="m1", new_text="make it 180 EUR", session_id="trip", similarity=0.8,
            score=0.9, reason="same slot", kind="value_change",
            suggested=ReviewAction.ACCEPT_NEW,
        ),
        at=datetime.now(UTC),
    )  # fmt: skip
    app.switch_page("pages/conflict_review.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    frames = [f.value for f in app.dataframe if "slot" in f.value.columns]
    (nodes,) = frames
    assert "hotel limit" in set(nodes["slot"]) and set(nodes["type"]) >= {"Goal", "Constraint"}
    links = [e for e in app.get("page_link") if "in the live graph" in e.proto.label]
    assert links and all("view=entities" in e.proto.query_string for e in links)


def test_a_held_back_context_change_reaches_the_review_page_and_its_answer_the_graph(
    app: AppTest,
) -> None:
    app.run()
    system = live_system()
    said = system.atlas.add("hotel up to 150 EUR, then 180", session_id="trip")
    talk_about_a_trip(system, memories=("m0", said.id, "m2"))
    stage = system.player.rules.context
    sink = system.player.rules.context_review
    assert stage is not None and sink is not None
    graph = stage.of("trip").graph
    in_force = next(n for n in graph.nodes(NodeType.CONSTRAINT) if n.attr("value") == "180 EUR")
    unsure = PendingReview(
        "user", "room cap", "200 EUR", in_force.id, "hotel limit", "180 EUR", 0.7, 4, None,
        (("kind", "money"), ("number", 200.0), ("unit", "EUR")),
    )  # fmt: skip
    item_id = sink("trip", unsure, in_force)
    assert item_id is not None
    stage.hold(item_id, "trip", unsure)
    app.switch_page("pages/conflict_review.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(in_force.id in str(t.value) for t in app.text)  # the reason names the node
    (nodes,) = [f.value for f in app.dataframe if "slot" in f.value.columns]
    row = nodes[nodes["node"] == in_force.id].to_dict("records")
    assert row and row[0]["state"] == "pending review"
    links = [e for e in app.get("page_link") if in_force.id in e.proto.label]
    assert links and f"focus={in_force.id}" in links[0].proto.query_string
    desk = desk_for(system.atlas, None)
    entry = desk.review.act(item_id, ReviewAction.ACCEPT_NEW, reviewer="ana")
    now = [n for n in graph.nodes(NodeType.CONSTRAINT) if n.attr("slot") == "hotel limit"]
    assert [n.attr("value") for n in now] == ["200 EUR"] and stage.held() == {}
    desk.review.undo(entry.id, reviewer="ana")  # the page's Undo: the graph follows
    back = [n for n in graph.nodes(NodeType.CONSTRAINT) if n.attr("slot") == "hotel limit"]
    assert [n.id for n in back] == [in_force.id] and list(stage.held()) == [item_id]


def test_knowledge_audit_lists_the_nodes_of_a_corrected_statement(app: AppTest) -> None:
    app.run()
    system = live_system()
    said = system.atlas.add("my hotel budget is 150 EUR per night", session_id="trip")
    corrected = system.atlas.add("make my hotel budget 180 EUR per night", session_id="trip")
    talk_about_a_trip(system, memories=(said.id, corrected.id, "m2"))
    desk = open_knowledge(system.atlas.embedder)
    knowledge_review(desk.kb)(corrected, 3, said.id)  # what the correction rule submits
    desk.db.close()
    app.switch_page("pages/knowledge_audit.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    frames = [f.value for f in app.dataframe if "slot" in f.value.columns]
    (nodes,) = frames
    assert set(nodes["slot"]) >= {"hotel limit"}
    assert set(nodes["state"]) >= {"active", "deprecated"}  # the value in force and the old one
    links = [e for e in app.get("page_link") if "in the live graph" in e.proto.label]
    assert links


def test_nodes_behind_memories_sessions_and_snapshot_sections() -> None:
    system = LiveSystem(embedder=HashingEmbedder())
    try:
        assert snapshot_sections(live_graphs(system.player.rules)) == {}
        talk_about_a_trip(system)
        stage = live_graphs(system.player.rules)
        found = nodes_behind(stage, ["m1"], ["trip", "nowhere"])
        assert [(s, n.attributes.get("value")) for s, n in found if n.type == "Constraint"] == [
            ("session:trip", "180 EUR")
        ]
        assert nodes_behind(stage, [], ["trip"]) == []
        assert scope_of_node(stage, found[0][1].id) == "session:trip"
        assert scope_of_node(stage, "nope") is None
        in_force = next(n.id for s, n in found if n.type == "Constraint")
        asked = RuleFired(
            at=DAY, session_id="trip", rule=CONTEXT_REVIEW, node_id=in_force, message="?"
        )
        elsewhere = RuleFired(
            at=DAY, session_id="other", rule=CONTEXT_REVIEW, node_id="x", message="?"
        )
        graph = scope_graph(stage, "session:trip", [asked, elsewhere])
        assert graph is not None and graph.pending == {in_force}
        assert graph.sessions == ("trip",)
        assert scope_graph(stage, "session:nowhere") is None
        graphs = graphs_from_section(snapshot_sections(stage)[SECTION])
        assert list(graphs) == ["session:trip"]
        assert graphs["session:trip"].to_records() == stage["session:trip"].to_records()
    finally:
        system.close()


def test_saving_the_live_atlas_keeps_its_graphs_in_the_snapshot_and_the_tables(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'atlas.db'}"
    system = LiveSystem(embedder=HashingEmbedder(), record=True, database_url=url)
    try:
        talk_about_a_trip(system)
        system.atlas.add("I want a hotel in Lisbon", session_id="trip")
        info = system.save_snapshot_to_db("with context")
        db, atlas_id = system.recording.db, system.recording.atlas_id
        assert db is not None and atlas_id is not None
        expected = live_graphs(system.player.rules)["session:trip"].to_records()
        stored = load_graph(db.context_graphs, graph_key(atlas_id, "session:trip")).to_records()
        assert [_unsaid(r) for r in stored] == [_unsaid(r) for r in expected]
        assert {r["session"] for r in stored} == {"trip"}  # the user node too: a session's graph
        with zipfile.ZipFile(io.BytesIO(db.snapshots.data(info.id))) as archive:
            section = archive.read(f"section/{SECTION}")
        assert graphs_from_section(section)["session:trip"].to_records() == expected
    finally:
        system.close()


def _unsaid(record: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in record.items() if k != "session"}


def test_a_loaded_snapshot_shows_the_graphs_saved_in_it(app: AppTest, tmp_path: Path) -> None:
    app.run()
    system = live_system()
    talk_about_a_trip(system)
    system.atlas.add("I want a hotel in Lisbon", session_id="trip")
    path = save_snapshot_with_context(
        system.atlas, live_graphs(system.player.rules), tmp_path / "with-context.npz"
    )
    atlas, graphs = open_snapshot(path.read_bytes(), HashingEmbedder(), name="with-context.npz")
    assert list(graphs) == ["session:trip"]
    app.session_state[Keys.SOURCE] = AtlasSource.SNAPSHOT
    app.session_state[Keys.LOADED] = LoadedAtlas(atlas, "file x", AtlasSource.SNAPSHOT, graphs)
    at = on_live_graph(app)
    at.segmented_control(key="graph_view_mode").set_value("entities").run()
    assert not at.exception, [e.value for e in at.exception]
    rows = at.dataframe[0].value.to_dict("records")
    assert [(r["in force"], r["replaced"]) for r in rows] == [("180 EUR", "150 EUR")]
    bare = atlas.save_snapshot(tmp_path / "bare.npz")
    assert open_snapshot(bare.read_bytes(), HashingEmbedder())[1] == {}


def test_a_broken_graph_section_refuses_the_upload_by_name(tmp_path: Path) -> None:
    atlas = ElasticMemoryAtlas(embedder=HashingEmbedder())
    path = atlas.save_snapshot(tmp_path / "odd.npz")
    add_sections(path, {SECTION: b"not json"})
    with pytest.raises(UploadError, match=r"odd\.npz: context-graph: is not JSON"):
        snapshot_graphs(path.read_bytes(), name="odd.npz")


def test_a_knowledge_item_leads_to_its_memories_and_sessions() -> None:
    now = datetime.now(UTC)
    item = KnowledgeItem(
        id="k1", key="memory.m0", version="2", content="make it 180 EUR",
        source_kind=SourceKind.LEARNED_FROM_EPISODE, source_name="agent-corrections",
        effective_from=now, expires_at=None, confidence=0.5, status=ItemStatus.PENDING_REVIEW,
        checklist=Checklist(), data={"memory_id": "m3"}, last_verified_at=None,
        citation_count=1, feedback_correct=0, feedback_wrong=0, consecutive_wrong=0,
        reviewer=None, review_note=None, created_at=now, updated_at=now, session_id="trip",
        user_id=None,
    )  # fmt: skip
    cite = Citation(
        id="c1", item_id="k1", item_key="memory.m0", item_version="2", cited_by_id="m1",
        cited_by_kind=CitedBy.MEMORY, at=now, session_id="s2", user_id=None,
        needs_review=False, flag_reason=None,
    )  # fmt: skip
    episode = dataclasses.replace(cite, id="c2", cited_by_id="e1", cited_by_kind=CitedBy.EPISODE)
    assert item_memories(item, [cite, episode]) == (["m3", "m0", "m1"], ["trip", "s2"])
