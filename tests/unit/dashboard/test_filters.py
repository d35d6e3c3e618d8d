import pytest

from memory_core.dashboard.filters import NodeFilter
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.model import MemoryKind
from memory_core.errors import InputError


def test_each_condition_narrows(atlas: ElasticMemoryAtlas) -> None:
    atlas.add("rail over air for every trip", session_id="s1")
    atlas.add("the budget cap is 5000 euros", session_id="s2", kind=MemoryKind.EPISODIC)
    nodes = atlas.nodes()
    assert len(NodeFilter().apply(nodes)) == 2
    assert [n.session_id for n in NodeFilter(sessions=("s2",)).apply(nodes)] == ["s2"]
    assert [n.kind for n in NodeFilter(kinds=(MemoryKind.EPISODIC,)).apply(nodes)] == [
        MemoryKind.EPISODIC
    ]
    assert [n.content for n in NodeFilter(text="RAIL").apply(nodes)] == [
        "rail over air for every trip"
    ]
    assert NodeFilter(min_weight=100.0).apply(nodes) == []
    assert not NodeFilter().active
    assert NodeFilter(text="x").active


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"min_weight": -1.0}, "min_weight"),
        ({"sessions": "s1"}, "sessions"),
        ({"kinds": ("nope",)}, "kinds"),
    ],
)
def test_rejects_bad_values(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError, match=field):
        NodeFilter(**kwargs)  # type: ignore[arg-type]
