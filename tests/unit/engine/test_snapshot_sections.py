"""Named sections in a snapshot: kept beside the atlas, invisible to its reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import ElasticMemoryAtlas, HashingEmbedder, InputError
from memory_core.engine.snapshot import add_sections, read_sections

from .conftest import DIM, AtlasFactory


def saved(make_atlas: AtlasFactory, tmp_path: Path) -> tuple[ElasticMemoryAtlas, Path]:
    atlas, _ = make_atlas()
    atlas.add("User prefers the train over flying", session_id="s1")
    atlas.add("The hotel limit is 180 EUR per night", session_id="s1")
    return atlas, atlas.save_snapshot(tmp_path / "atlas.npz")


def test_sections_round_trip_and_the_atlas_still_loads_exactly(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    atlas, path = saved(make_atlas, tmp_path)
    assert read_sections(path) == {}
    add_sections(path, {"context": b'{"nodes": []}', "other.v1": b"\x00\xff"})
    assert read_sections(path) == {"context": b'{"nodes": []}', "other.v1": b"\x00\xff"}
    loaded = ElasticMemoryAtlas.load_snapshot(path, embedder=HashingEmbedder(DIM))
    assert [(n.id, n.content, n.weight) for n in loaded.nodes()] == [
        (n.id, n.content, n.weight) for n in atlas.nodes()
    ]


def test_a_name_already_present_is_refused_and_the_file_is_unchanged(
    make_atlas: AtlasFactory, tmp_path: Path
) -> None:
    _, path = saved(make_atlas, tmp_path)
    add_sections(path, {"context": b"first"})
    before = path.read_bytes()
    with pytest.raises(InputError, match="already holds the section 'context'"):
        add_sections(path, {"fresh": b"x", "context": b"second"})
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["", "Context", "a/b", "../x", "x" * 65, "1st"])
def test_bad_names_are_refused_before_writing(
    make_atlas: AtlasFactory, tmp_path: Path, name: str
) -> None:
    _, path = saved(make_atlas, tmp_path)
    before = path.read_bytes()
    with pytest.raises(InputError, match="section"):
        add_sections(path, {name: b"x"})
    assert path.read_bytes() == before


def test_values_must_be_bytes(make_atlas: AtlasFactory, tmp_path: Path) -> None:
    _, path = saved(make_atlas, tmp_path)
    with pytest.raises(InputError, match="must be bytes, got str"):
        add_sections(path, {"context": "text"})  # type: ignore[dict-item]


def test_reading_sections_of_something_else_names_the_file(tmp_path: Path) -> None:
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(InputError, match=r"junk\.npz is not an atlas snapshot"):
        read_sections(junk)
