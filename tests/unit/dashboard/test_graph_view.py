import json
import re
from pathlib import Path

import pytest
import pyvis

from memory_core.dashboard.graph_view import (
    GREY,
    HIGHLIGHT_BORDER,
    KIND_SHAPES,
    RELATION_STYLES,
    build_graph,
    external_urls,
    select_drawn,
    weight_colors,
)
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryKind, MemoryStatus, Relation
from memory_core.errors import InputError

HOSTILE = '<script>window.__pwned=1</script> and <a href="javascript:alert(1)">x</a> & more'
VIS_JS = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2" / "vis-network.min.js"


def drawn_data(html: str, name: str) -> list[dict[str, object]]:
    match = re.search(rf"{name} = new vis\.DataSet\((\[.*?\])\);", html)
    assert match is not None
    data: list[dict[str, object]] = json.loads(match.group(1))
    return data


def view_of(atlas: ElasticMemoryAtlas, **kwargs: object):  # type: ignore[no-untyped-def]
    cfg = atlas.config
    return build_graph(
        atlas.nodes(), atlas.edges(), weight_range=(cfg.weight_floor, cfg.weight_cap), **kwargs
    )


def test_html_loads_nothing_from_elsewhere(atlas: ElasticMemoryAtlas) -> None:
    atlas.add(HOSTILE, session_id="s1")
    html = view_of(atlas).html
    assert external_urls(html) == []
    assert "bootstrap" not in html.lower() and "jsdelivr" not in html.lower()
    # What remains are strings inside vis-network itself (licence text, the SVG namespace).
    library = VIS_JS.read_text(encoding="utf-8")
    for url in set(re.findall(r"https?://[^\s\"'<>)\\]+", html)):
        assert url in library, url


def test_external_urls_spots_every_kind_of_reference() -> None:
    html = (
        '<link href="https://cdn.example/x.css"><script src="//cdn.example/x.js"></script>'
        "<style>@import 'https://a.example/y.css'; b{background:url(http://b.example/z.png)}</style>"
    )
    assert len(external_urls(html)) == 4


def test_tooltips_are_plain_text_even_with_href(atlas: ElasticMemoryAtlas) -> None:
    node = atlas.add(HOSTILE, session_id="s1")
    html = view_of(atlas).html
    assert "popup.innerHTML" not in html  # pyvis's HTML popup stays off despite "href"
    assert "<script>window.__pwned" not in html  # the text cannot close the page's script
    title = str(drawn_data(html, "nodes")[0]["title"])
    assert title.startswith(node.content)  # verbatim: no &lt; or &amp; for the user to see
    assert "&lt;" not in title


def test_cap_keeps_the_strongest_and_says_how_many_are_hidden(
    atlas: ElasticMemoryAtlas, topics: list[str]
) -> None:
    nodes = [
        atlas.add(f"a memory about {topic}", session_id="s1", importance=i / 10)
        for i, topic in enumerate(topics[:10])
    ]
    view = view_of(atlas, max_nodes=3)
    strongest = sorted(atlas.nodes(), key=lambda n: -n.weight)[:3]
    assert set(view.drawn) == {n.id for n in strongest}
    assert view.hidden == 7
    assert "7 weaker memories are hidden" in view.note
    assert view_of(atlas, max_nodes=100).note == ""
    assert len(nodes) == 10


def test_styles_follow_weight_kind_status_relation_and_highlight(atlas: ElasticMemoryAtlas) -> None:
    a = atlas.add("alpha facts about trains", session_id="s1", kind=MemoryKind.EPISODIC)
    b = atlas.add("beta facts about hotels", session_id="s1", kind=MemoryKind.KNOWLEDGE)
    atlas.link(a.id, b.id, Relation.CONTRADICTS)
    atlas.set_status(b.id, MemoryStatus.DEPRECATED)
    html = view_of(atlas, highlight={a.id: 0.8}).html
    nodes = {str(n["id"]): n for n in drawn_data(html, "nodes")}
    assert nodes[a.id]["shape"] == KIND_SHAPES[MemoryKind.EPISODIC]
    assert nodes[b.id]["shape"] == KIND_SHAPES[MemoryKind.KNOWLEDGE]
    assert nodes[b.id]["color"] == {"background": GREY, "border": GREY}
    assert nodes[a.id]["color"]["border"] == HIGHLIGHT_BORDER  # type: ignore[index]
    assert "retrieval score 0.800" in str(nodes[a.id]["title"])
    edges = drawn_data(html, "edges")
    contradicts = [e for e in edges if str(e["title"]).startswith("contradicts")]
    assert contradicts and contradicts[0]["dashes"] is True
    assert contradicts[0]["color"] == RELATION_STYLES[Relation.CONTRADICTS].color


def test_colours_darken_with_weight_and_clip_to_the_range() -> None:
    weak, mid, strong, above = weight_colors([0.1, 1.5, 3.0, 9.0], 0.1, 3.0)
    brightness = [sum(int(v) for v in re.findall(r"\d+", c)) for c in (weak, mid, strong)]
    assert brightness[0] > brightness[1] > brightness[2]
    assert strong == above


def test_size_by_degree_grows_with_links(atlas: ElasticMemoryAtlas) -> None:
    hub = atlas.add("hub memory", session_id="s1", importance=0.5)
    for i in range(4):
        leaf = atlas.add(
            f"leaf number {i} unrelated words {i}", session_id=f"other{i}", importance=0.5
        )
        atlas.link(hub.id, leaf.id)
    nodes = {str(n["id"]): n for n in drawn_data(view_of(atlas, size_by="degree").html, "nodes")}
    sizes = sorted((float(n["size"]), i) for i, n in nodes.items())  # type: ignore[arg-type]
    assert sizes[-1][1] == hub.id


def test_select_drawn_breaks_ties_by_newest(atlas: ElasticMemoryAtlas) -> None:
    kept, hidden = select_drawn(atlas.nodes(), 5)
    assert kept == [] and hidden == 0


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"max_nodes": 0}, "max_nodes"), ({"size_by": "x"}, "size_by")]
)
def test_rejects_bad_arguments(
    atlas: ElasticMemoryAtlas, kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(InputError, match=field):
        view_of(atlas, **kwargs)


def test_colour_scale_follows_the_weights_drawn(atlas: ElasticMemoryAtlas) -> None:
    from memory_core.dashboard.graph_view import MIN_COLOR_SPAN, present_range

    assert present_range([0.6, 0.9, 0.7]) == (0.6, 0.9)
    low, high = present_range([0.8])
    assert high - low == pytest.approx(MIN_COLOR_SPAN)
    atlas.add_many(["alpha beta gamma", "delta epsilon", "zeta eta theta"], session_id="s")
    view = build_graph(atlas.nodes(), atlas.edges())
    weights = [n.weight for n in atlas.nodes()]
    assert view.weight_range == present_range(weights)
    colours = {n["color"]["background"] for n in drawn_data(view.html, "nodes")}  # type: ignore[index]
    assert len(colours) > 1 or max(weights) - min(weights) < 1e-9


def test_layout_keeps_drawn_memories_in_place(atlas: ElasticMemoryAtlas) -> None:
    atlas.add_many([f"memory number {i} about topic {i % 3}" for i in range(12)], session_id="s")
    first = build_graph(atlas.nodes(), atlas.edges())
    atlas.add("a brand new memory about topic 1", session_id="s")
    second = build_graph(atlas.nodes(), atlas.edges(), previous=first.positions)
    assert all(second.positions[i] == p for i, p in first.positions.items())
    assert len(second.positions) == len(first.positions) + 1
    fresh = build_graph(atlas.nodes(), atlas.edges()).positions
    assert fresh == build_graph(atlas.nodes(), atlas.edges()).positions  # seeded: repeatable
    again = build_graph(atlas.nodes(), atlas.edges(), previous=second.positions)
    assert again.positions == second.positions  # nothing new: nothing moves
    data = {n["id"]: n for n in drawn_data(again.html, "nodes")}
    assert all((n["x"], n["y"]) == again.positions[i] for i, n in data.items())


def test_labels_only_where_they_fit(atlas: ElasticMemoryAtlas) -> None:
    from memory_core.dashboard.graph_view import fitting_labels

    a = atlas.add("the strongest memory of all", session_id="s", importance=1.0)
    b = atlas.add("a weaker memory right on top", session_id="s", importance=0.0)
    c = atlas.add("a memory far away", session_id="s", importance=0.0)
    nodes = atlas.nodes()
    positions = {a.id: (0.0, 0.0), b.id: (30.0, 0.0), c.id: (400.0, 200.0)}
    assert fitting_labels(nodes, positions) == {
        a.id: "the strongest memory of all",
        c.id: "a memory far away",
    }


def test_legend_names_colours_sizes_shapes_and_each_relation_drawn(
    atlas: ElasticMemoryAtlas,
) -> None:
    from memory_core.dashboard.graph_view import legend_html

    one = atlas.add("first", session_id="s")
    two = atlas.add("second", session_id="s")
    atlas.link(one.id, two.id, Relation.CAUSAL, 0.8)
    view = build_graph(atlas.nodes(), atlas.edges())
    key = legend_html(view)
    low, high = view.weight_range
    assert f"weight {low:.2f}" in key and f"{high:.2f}" in key and "size: importance" in key
    assert all(kind.value in key for kind in KIND_SHAPES)
    assert {r.value for r in view.relations} <= set(re.findall(r"&nbsp;(\w+)</span>", key))
    assert "causal" in key and RELATION_STYLES[Relation.CAUSAL].color in key


def test_a_click_on_a_node_is_posted_to_the_page(atlas: ElasticMemoryAtlas) -> None:
    atlas.add("click me", session_id="s")
    html = build_graph(atlas.nodes(), atlas.edges()).html
    assert "network.on('click'" in html and "postMessage({type:'atlas-inspect'" in html
    assert external_urls(html) == []
