"""Every page through ``streamlit.testing.v1.AppTest`` (no browser).

The app reads ``ATLAS_DASHBOARD_EMBEDDER=hashing`` when the cached live system is first
built, so these tests never load MiniLM; the cache is cleared after each test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core.dashboard.demo import PlayerState
from memory_core.dashboard.jobs import AB_RUN
from memory_core.dashboard.live import LiveSystem
from memory_core.dashboard.state import Keys
from memory_core.dashboard.ui.shared import job_registry, live_system

ROOT = Path(__file__).resolve().parents[3]
PAGES = [
    "pages/home.py",
    "pages/demo_player.py",
    "pages/live_graph.py",
    "pages/playground.py",
    "pages/weights.py",
    "pages/eviction_log.py",
    "pages/ab_tuning.py",
]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AppTest]:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ATLAS_DASHBOARD_EMBEDDER", "hashing")
    monkeypatch.setenv("ATLAS_DASHBOARD_RECORD", "0")
    monkeypatch.setenv("ATLAS_DATA_DIR", str(tmp_path))
    live_system.clear()
    job_registry.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    yield at
    for job in job_registry().running():  # a job left running must not block the next test
        job.cancel()
        job.wait(60)
    job_registry.clear()
    live_system().close()
    live_system.clear()


def shared() -> LiveSystem:
    return live_system()


def go(at: AppTest, page: str) -> AppTest:
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(str(m.value) for m in at.metric if m.label == label)


def ms(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    return next(m for m in at.multiselect if m.label == label)


def drawn_caption(at: AppTest) -> str:
    return next(str(c.value) for c in at.caption if "drawn" in str(c.value))


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_without_exception(app: AppTest, page: str) -> None:
    go(app, page)
    assert app.title


def test_sidebar_offers_sources_and_filters(app: AppTest) -> None:
    # Only the first AppTest run of an st.navigation app includes the entrypoint's sidebar.
    shared().atlas.add("a memory in session one", session_id="one")
    app.run()
    assert [r.label for r in app.radio] == ["Atlas"]
    assert ms(app, "Sessions").options == ["one"]
    assert [s.label for s in app.slider][-1] == "Minimum weight"
    assert any("Database recording is off" in str(c.value) for c in app.caption)


def test_demo_step_adds_nodes(app: AppTest) -> None:
    go(app, "pages/demo_player.py")
    assert metric(app, "Memories") == "0"
    app.button[2].click().run()  # Step
    assert metric(app, "Memories") == "1"
    for _ in range(3):
        app.button[2].click().run()
    assert metric(app, "Memories") == "4"
    assert int(metric(app, "Links")) >= 3
    app.button[3].click().run()  # Reset
    assert metric(app, "Memories") == "0"


def test_sidebar_filters_change_the_graph(app: AppTest) -> None:
    go(app, "pages/live_graph.py")
    atlas = shared().atlas
    atlas.add("I prefer the train to flying", session_id="travel")
    atlas.add("The hotel must be walkable to the fair", session_id="travel")
    atlas.add("My cat is called Miso", session_id="home")
    app.run()
    assert drawn_caption(app).startswith("3 memories")
    # AppTest runs a switched-to page without the entrypoint's sidebar: set what it would.
    app.session_state[Keys.SESSIONS] = ["home"]
    app.run()
    assert drawn_caption(app).startswith("1 memories")
    app.session_state[Keys.SESSIONS] = []
    app.session_state[Keys.TEXT] = "hotel"
    app.run()
    assert drawn_caption(app).startswith("1 memories")
    app.session_state[Keys.TEXT] = "nothing like this"
    app.run()
    assert any("No memory matches" in str(i.value) for i in app.info)


def test_live_graph_caps_drawn_nodes(app: AppTest, topics: list[str]) -> None:
    go(app, "pages/live_graph.py")
    shared().atlas.add_many([f"a fact about {topic}" for topic in topics[:25]], session_id="s")
    app.slider(key="graph_max_nodes").set_value(10).run()
    assert "15 weaker memories are hidden" in drawn_caption(app)


def test_playground_stores_recalls_and_explains(app: AppTest) -> None:
    go(app, "pages/playground.py")
    app.chat_input[0].set_value("I always take the train, never short flights").run()
    assert len(shared().atlas) == 1
    app.chat_input[0].set_value("how do I usually travel, by train?").run()
    assert not app.exception
    table = app.dataframe[0].value
    assert list(table["rank"]) == [1] and "final" not in table.columns and "dense" in table.columns
    assert len(shared().atlas) == 2
    assert any("Recalled 1 memory" in str(t.value) for t in app.text)


def test_playground_hostile_text_is_shown_as_text(app: AppTest) -> None:
    go(app, "pages/playground.py")
    payload = '<img src=x onerror="window.__pwned=1"> [x](javascript:alert(1))'
    app.chat_input[0].set_value(payload).run()
    assert any(t.value == payload for t in app.text)  # st.text, never markdown
    assert all(payload not in str(m.value) for m in app.markdown)


def test_weights_page_charts_and_filters(app: AppTest) -> None:
    go(app, "pages/weights.py")
    assert any("No memories to chart" in str(i.value) for i in app.info)
    shared().atlas.add_many(["alpha beta", "gamma delta", "epsilon zeta"], session_id="s")
    shared().skip_ahead(2.0)
    app.run()
    assert len(app.get("plotly_chart")) == 3  # histogram, scatter, evolution
    app.session_state[Keys.KINDS] = ["summary"]
    app.run()
    assert any("No memories to chart" in str(i.value) for i in app.info)


def test_eviction_log_filters_and_restores(app: AppTest) -> None:
    go(app, "pages/eviction_log.py")
    atlas = shared().atlas
    keep = atlas.add("the budget cap is 6000 euros", session_id="s1")
    gone = [
        atlas.add(f"evicted memory number {i} about things {i}", session_id="s1") for i in range(3)
    ]
    for node in gone:
        atlas.delete(node.id)
    app.run()
    assert len(app.dataframe[0].value) == 3
    app.text_input(key="evictions_text").input("number 1").run()
    assert list(app.dataframe[0].value["node_id"]) == [gone[1].id]
    ms(app, "Reason").set_value(["orphan"]).run()
    assert any("match the filters: reason hides 3" in str(i.value) for i in app.info)
    ms(app, "Reason").set_value([]).run()
    restore = next(b for b in app.button if b.label == "Restore into the live atlas")
    restore.click().run()
    assert len(atlas) == 2 and keep.id in atlas
    again = next(b for b in app.button if b.label == "Restore into the live atlas")
    assert again.disabled  # restoring twice is impossible


def test_demo_reset_is_not_an_eviction_and_leaves_no_erased_rows(app: AppTest) -> None:
    go(app, "pages/demo_player.py")
    for _ in range(4):
        next(b for b in app.button if b.label == "Step").click().run()
    next(b for b in app.button if b.label == "Reset").click().run()
    assert metric(app, "Memories") == "0" and metric(app, "Evicted") == "0"
    app.switch_page("pages/eviction_log.py")
    app.run()
    assert not app.exception
    # the replay started over: its rows are gone, not listed as "text erased" (issue #29)
    assert not any(c.key == "evictions_erased" for c in app.checkbox)


def test_home_explains_and_plays_the_demo_in_one_click(app: AppTest) -> None:
    app.run()
    assert not app.exception
    assert app.title[0].value == "Elastic Atlas"
    assert "memory engine for AI agents" in app.markdown[0].value
    next(b for b in app.button if b.label == "Play the demo").click().run()
    assert not app.exception
    assert app.title[0].value == "Demo player"
    player = shared().player
    status = player.status()
    assert status.state is PlayerState.PLAYING or status.position > 0
    player.pause()


def test_home_sample_ab_starts_the_default_run(app: AppTest) -> None:
    app.run()
    next(b for b in app.button if b.label == "Open a sample A/B").click().run()
    assert not app.exception
    assert app.title[0].value == "A/B tuning"
    job = job_registry().latest(AB_RUN)
    assert job is not None and job.running  # started at once, for every viewer to see
    job.cancel()


def test_one_reviewer_name_for_both_review_pages_carried_over(app: AppTest) -> None:
    go(app, "pages/conflict_review.py")
    app.text_input(key="reviewer").set_value("ana").run()
    app.switch_page("pages/live_graph.py")
    app.run()
    app.switch_page("pages/knowledge_audit.py")
    app.run()
    assert not app.exception
    field = app.text_input(key="reviewer")
    assert field.value == "ana" and field in app.sidebar.text_input


def test_a_fresh_tab_shows_the_conversation_the_player_holds(app: AppTest) -> None:
    from memory_core.dashboard.demo import sample_files

    shared().player.load(sample_files()["npc-innkeeper"])  # another tab picked it
    go(app, "pages/demo_player.py")
    assert app.selectbox(key="demo_conversation").value == "npc-innkeeper"
    assert app.selectbox(key="demo_preset").value == "demo"
    assert any("Running **demo**: power-law decay" in str(c.value) for c in app.caption)
    app.selectbox(key="demo_preset").set_value("tuned").run()
    assert shared().preset == "tuned"


def test_demo_page_inspects_a_memory_and_says_a_click_does(app: AppTest) -> None:
    go(app, "pages/demo_player.py")
    next(b for b in app.button if b.label == "Step").click().run()
    picker = app.selectbox(key="inspector_node")
    assert picker.value in {n.id for n in shared().atlas.nodes()}
    assert any("click it to inspect it below" in str(c.value) for c in app.caption)
