"""The entity view of the context graph: states, caps, labels, the table of constraints."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from memory_core.dashboard.context_view import (
    LABELLED_CONSTRAINTS,
    STATE_COLORS,
    build_entity_graph,
    constraints_in_force,
    focus_options,
    latest,
    link_rows,
    node_state,
    nodes_for_memories,
    query_focus,
    select_nodes,
)
from memory_core.dashboard.graph_view import external_urls
from memory_core.errors import InputError
from memory_core.store.context_graphs import ContextEdgeRecord, ContextNodeRecord


def node(ident: str, type_: str, text: str, **fields: object) -> ContextNodeRecord:
    return ContextNodeRecord(id=ident, version=1, seq=0, type=type_, label=text, **fields)  # type: ignore[arg-type]


def edge(source: str, type_: str, target: str, **fields: object) -> ContextEdgeRecord:
    return ContextEdgeRecord(
        id=f"{source}>{target}",
        version=1,
        seq=0,
        type=type_,
        source=source,
        target=target,
        **fields,
    )  # type: ignore[arg-type]


def hotel_trip() -> tuple[list[ContextNodeRecord], list[ContextEdgeRecord]]:
    old = node(
        "C-150", "Constraint", "hotel limit: 150 EUR per night",
        attributes={"slot": "hotel limit", "value": "150 EUR per night"},
        turns=(1,), memory_ids=("m1",),
    )  # fmt: skip
    nodes = [
        node("U-ana", "User", "ana"),
        node("G-trip", "Goal", "book a trip to Lisbon", turns=(0,), memory_ids=("m0",)),
        old,
        replace(old, version=2, deprecated=True),
        node(
            "C-180",
            "Constraint",
            "hotel limit: 180 EUR per night",
            attributes={"slot": "hotel limit", "value": "180 EUR per night"},
            turns=(4,),
            memory_ids=("m4",),
        ),
        node("E-lisbon", "Entity", "Lisbon", turns=(0,), memory_ids=("m0",)),
        node("E-pin", "Entity", "my PIN 4411", soft_deleted=True, turns=(6,), memory_ids=("m6",)),
    ]
    edges = [
        edge("U-ana", "HAS_GOAL", "G-trip"),
        edge("G-trip", "REFERENCES", "E-lisbon"),
        edge("G-trip", "SATISFIES", "C-150", deprecated=True),
        edge("G-trip", "SATISFIES", "C-180"),
        edge("C-180", "CONFLICTS_WITH", "C-150"),
        edge("G-trip", "REFERENCES", "E-pin", soft_deleted=True),
    ]
    return nodes, edges


def vis_nodes(html: str) -> dict[str, dict[str, object]]:
    found = re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", html, re.DOTALL)
    assert found is not None
    return {str(n["id"]): n for n in json.loads(found.group(1))}


def vis_edges(html: str) -> list[dict[str, object]]:
    found = re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", html, re.DOTALL)
    assert found is not None
    return list(json.loads(found.group(1)))


def test_states_come_from_the_newest_version() -> None:
    nodes, _ = hotel_trip()
    current = {n.id: n for n in latest(nodes)}
    assert current["C-150"].version == 2
    assert node_state(current["C-150"]) == "deprecated"
    assert node_state(current["C-180"]) == "active"
    assert node_state(current["C-180"], pending={"C-180"}) == "pending review"
    assert node_state(current["E-pin"]) == "forgotten"


def test_deprecated_is_dashed_and_grey_forgotten_hidden_unless_asked() -> None:
    nodes, edges = hotel_trip()
    view = build_entity_graph(nodes, edges)
    drawn = vis_nodes(view.html)
    assert "E-pin" not in drawn and view.forgotten_hidden == 1
    assert "forgotten" in view.note
    assert drawn["C-150"]["shapeProperties"] == {"borderDashes": [6, 4]}
    assert drawn["C-150"]["color"]["background"] == STATE_COLORS["deprecated"]  # type: ignore[index]
    assert drawn["C-180"]["shapeProperties"] == {"borderDashes": False}
    assert drawn["C-180"]["color"]["background"] == STATE_COLORS["active"]  # type: ignore[index]
    satisfies_old = next(
        e for e in vis_edges(view.html) if e["to"] == "C-150" and e["from"] == "G-trip"
    )
    assert satisfies_old["dashes"] is True
    shown = build_entity_graph(nodes, edges, show_forgotten=True)
    assert "E-pin" in vis_nodes(shown.html) and shown.forgotten_hidden == 0
    assert external_urls(view.html) == []


def test_the_constraint_in_force_names_the_one_it_replaced_and_its_turns() -> None:
    nodes, edges = hotel_trip()
    rows = constraints_in_force(nodes, edges)
    assert rows == [
        {
            "slot": "hotel limit",
            "in force": "180 EUR per night",
            "state": "active",
            "replaced": "150 EUR per night",
            "set in": "",  # the records name no session
            "replaced set in": "",
            "turns": "4",
            "node": "C-180",
            "replaced node": "C-150",
        }
    ]


def test_a_users_graph_says_which_session_set_a_value_and_which_changed_it() -> None:
    nodes, edges = hotel_trip()
    said = {"C-150": ("s1", "s1"), "C-180": ("s3", "s3")}
    nodes = [
        replace(n, origin_session_id=said[n.id][0], session_id=said[n.id][1]) if n.id in said else n
        for n in nodes
    ]
    nodes = [
        replace(n, session_id="s3") if n.id == "C-150" and n.version == 2 else n for n in nodes
    ]
    (row,) = constraints_in_force(nodes, edges)
    assert (row["in force"], row["set in"], row["replaced"], row["replaced set in"]) == (
        "180 EUR per night", "s3", "150 EUR per night", "s1"
    )  # fmt: skip
    old = vis_nodes(build_entity_graph(nodes, edges).html)["C-150"]["title"]
    assert "first said in session s1" in str(old) and "this version by session s3" in str(old)
    assert [r["set in"] for r in link_rows(latest(nodes)) if r["node"] == "C-150"] == ["s1"]


def test_a_changed_value_on_the_same_node_replaces_its_older_version() -> None:
    first = node(
        "C-party", "Constraint", "party of 4", attributes={"slot": "party size", "value": "4"}
    )
    second = replace(
        first, version=2, label="party of 6", attributes={"slot": "party size", "value": "6"}
    )
    rows = constraints_in_force([first, second], [])
    assert [(r["in force"], r["replaced"], r["replaced node"]) for r in rows] == [("6", "4", "")]


def big_graph(entities: int = 60, constraints: int = 400) -> tuple[list, list]:  # type: ignore[type-arg]
    """About what 500 memories of task talk give: many constraints hanging off entities."""
    nodes = [node("U-ana", "User", "ana"), node("G-0", "Goal", "plan the move")]
    edges = [edge("U-ana", "HAS_GOAL", "G-0")]
    for e in range(entities):
        nodes.append(node(f"E-{e}", "Entity", f"thing {e}"))
        edges.append(edge("G-0", "REFERENCES", f"E-{e}"))
    for c in range(constraints):
        nodes.append(
            node(
                f"C-{c}",
                "Constraint",
                f"limit {c}",
                turns=(c,),
                deprecated=c % 3 == 0,
                attributes={"slot": f"s{c % 50}"},
            )
        )
        edges.append(edge(f"E-{c % 7}", "REFERENCES", f"C-{c}"))  # seven busy hubs
    return nodes, edges


def test_readable_at_hundreds_of_nodes_capped_hubs_first_and_labelled() -> None:
    nodes, edges = big_graph()
    view = build_entity_graph(nodes, edges, max_nodes=120)
    drawn = vis_nodes(view.html)
    assert len(drawn) == 120 and view.hidden == len(nodes) - 120
    assert {"U-ana", "G-0"} <= drawn.keys()
    assert {f"E-{h}" for h in range(7)} <= drawn.keys()  # the hubs made the cut
    assert not any(drawn[i]["shapeProperties"]["borderDashes"] for i in drawn)  # type: ignore[index]
    hub_labels = [drawn[f"E-{h}"]["label"] for h in range(7)]
    assert hub_labels == [f"thing {h}" for h in range(7)]
    labelled = [i for i in drawn if drawn[i]["label"] != " "]
    assert len(labelled) == 2 + 7 + LABELLED_CONSTRAINTS  # no label soup: hover for the rest
    assert "C-398" in labelled and "C-1" not in labelled  # the most recently said ones
    assert str(drawn["C-301"]["title"]).startswith("Constraint: limit 301\nstate: active")


def test_a_big_drawing_has_no_progress_bar_left_over_it() -> None:
    nodes, edges = big_graph()
    html = build_entity_graph(nodes, edges, max_nodes=300).html
    assert "loadingBar" not in html  # physics is off: nothing would ever hide it


def test_focus_brings_a_node_and_its_neighbours_in_even_past_the_cap() -> None:
    nodes, edges = big_graph()
    kept, _ = select_nodes(latest(nodes), edges, 10, focus="C-399")
    assert kept[0].id == "C-399" and "E-0" in {n.id for n in kept}
    view = build_entity_graph(nodes, edges, max_nodes=10, focus="C-399")
    assert vis_nodes(view.html)["C-399"]["borderWidth"] == 4


@pytest.mark.parametrize("bad", [0, 601, True, 2.5])
def test_a_bad_cap_is_refused(bad: object) -> None:
    nodes, edges = hotel_trip()
    with pytest.raises(InputError, match="max_nodes"):
        build_entity_graph(nodes, edges, max_nodes=bad)  # type: ignore[arg-type]


def test_review_links_find_the_nodes_a_pair_of_memories_produced() -> None:
    nodes, _ = hotel_trip()
    found = nodes_for_memories(nodes, ["m1", "m4", ""])
    assert [n.id for n in found] == ["C-150", "C-180"]
    rows = link_rows(found)
    assert [(r["node"], r["slot"], r["state"]) for r in rows] == [
        ("C-150", "hotel limit", "deprecated"),
        ("C-180", "hotel limit", "active"),
    ]
    assert nodes_for_memories(nodes, []) == []


def test_focus_choices_and_query_parameters() -> None:
    nodes, _ = hotel_trip()
    options = focus_options(nodes)
    assert list(options)[:2] == ["U-ana", "G-trip"]
    assert options["C-150"].endswith("deprecated")
    assert query_focus({"view": "entities", "focus": "C-180"}) == ("entities", "C-180")
    assert query_focus({"view": "bogus", "focus": "x" * 65}) == (None, None)
