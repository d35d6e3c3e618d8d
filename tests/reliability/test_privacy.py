"""Privacy: a purged session leaves no trace; erase reaches every table; sessions stay apart.

The secret is searched for in every structure of the atlas (node table including freed
slots, graph, the atlas-wide vector index, BM25 postings, working tiers), in the embedding
cache (memory and the raw bytes of its SQLite file and WAL), and in the event log under
each ``log_content`` policy: in the rows and in the raw bytes of the database file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder, ManualClock
from memory_core.embedding.cache import CachedEmbedder, EmbeddingCache, text_key
from memory_core.store.engine import open_database
from memory_core.store.records import EventFilter
from memory_core.store.sink import EventSink

from .conftest import START, build

SECRET = "zebracode4711"
SECRET_TEXT = f"the vault combination is {SECRET}, tell nobody"


def raw_bytes(db_file: Path) -> bytes:
    """The database file and its WAL/journal, as they sit on disk."""
    return b"".join(p.read_bytes() for p in db_file.parent.glob(db_file.name + "*") if p.is_file())


def traces_in_atlas(atlas: ElasticMemoryAtlas, needle: str) -> list[str]:
    """Every place of the in-memory atlas where ``needle`` still appears."""
    s, found = atlas._s, []
    table = s.table
    for slot in range(len(table.ids)):
        for column in ("contents", "metadata", "provenance"):
            if needle in repr(getattr(table, column)[slot]):
                found.append(f"table.{column}[{slot}]")
    if any(needle in term for term in s.lexical._postings):
        found.append("bm25 postings")
    if any(needle in repr(r) for r in s.edges.all_relations()):
        found.append("graph")
    return found


@pytest.mark.parametrize("log_content", ["full", "redacted", "none"])
def test_purge_then_erase_leaves_no_trace_anywhere(tmp_path: Path, log_content: str) -> None:
    cache_file, db_file = tmp_path / "cache.db", tmp_path / "atlas.db"
    embedder = CachedEmbedder(HashingEmbedder(64), EmbeddingCache(cache_file))
    clock = ManualClock(START)
    atlas = ElasticMemoryAtlas(
        AtlasConfig(memory_watermark=1.0, working_memory_size=3), embedder=embedder, clock=clock
    )
    db = open_database(f"sqlite:///{db_file}")
    sink = EventSink(db, log_content=log_content, flush_interval=0.05).attach(atlas)
    kept = atlas.add("the user likes green tea", session_id="other")
    secret = atlas.add(SECRET_TEXT, session_id="victim", metadata={"note": SECRET})
    atlas.add("meeting with the bank on monday", session_id="victim", links_to=[secret.id])
    atlas.retrieve("vault combination", session_id="victim")
    atlas.decay()
    sink.flush()
    assert db.events.count(EventFilter(session_id="victim")) > 0

    assert atlas.end_session("victim", mode="purge") == 2
    sink.flush()
    # the atlas: nothing of the session anywhere, the other session intact
    assert "victim" not in atlas.sessions()
    assert [n.id for n in atlas.nodes()] == [kept.id]
    assert traces_in_atlas(atlas, SECRET) == []
    hits = atlas.retrieve(SECRET, session_id="other", cross_session=True, reinforce=False)
    assert all(SECRET not in h.node.content for h in hits)
    # the embedding cache: neither the vector nor its key, in memory or on disk
    assert not embedder.cache.contains(embedder.name, SECRET_TEXT)
    assert text_key(SECRET_TEXT).encode() not in raw_bytes(cache_file)
    assert embedder.cache.contains(embedder.name, "the user likes green tea")
    # the log: content only under "full", and erase removes it from the file's bytes too
    logged = SECRET.encode() in raw_bytes(db_file)
    assert logged == (log_content == "full")
    sha = hashlib.sha256(SECRET_TEXT.encode()).hexdigest().encode()
    assert (sha in raw_bytes(db_file)) == (log_content == "redacted")
    sink.close()
    deleted = db.erase(session_id="victim")
    assert deleted["events"] > 0
    assert db.events.count(EventFilter(session_id="victim")) == 0
    assert db.events.count(EventFilter(session_id="other")) > 0
    db.close()
    on_disk = raw_bytes(db_file)
    assert SECRET.encode() not in on_disk and sha not in on_disk
    assert secret.id.encode() not in on_disk


def test_erase_by_user_across_store_knowledge_and_conflict_tables(tmp_path: Path) -> None:
    """Every table of the schema with a user or session column is emptied for the subject."""
    from sqlalchemy import inspect, text

    import memory_core.conflicts.models
    import memory_core.knowledge.models  # noqa: F401  (registers the erasable tables)

    db_file = tmp_path / "atlas.db"
    db = open_database(f"sqlite:///{db_file}")
    atlas, _ = build()
    with EventSink(db, user_id="mallory", flush_interval=0.05).attach(atlas) as sink:
        atlas.add(f"mallory's secret {SECRET}", session_id="m1")
        sink.flush()
    with EventSink(db, user_id="alice", flush_interval=0.05).attach(atlas) as sink:
        atlas.add("alice's harmless note", session_id="a1")
        sink.flush()
    tables = inspect(db.engine).get_table_names()
    subject_tables = [
        t
        for t in tables
        if {"user_id", "session_id"} & {c["name"] for c in inspect(db.engine).get_columns(t)}
    ]
    assert {"events"} <= set(subject_tables)
    assert any(t.startswith(("knowledge", "conflict")) or "episode" in t for t in subject_tables)
    deleted = db.erase(user_id="mallory")
    assert deleted["events"] >= 1
    with db.engine.connect() as conn:
        for table in subject_tables:
            columns = {c["name"] for c in inspect(db.engine).get_columns(table)}
            if "user_id" in columns:
                left = conn.execute(
                    text(f'SELECT count(*) FROM "{table}" WHERE user_id = :u'), {"u": "mallory"}
                ).scalar()
                assert left == 0, table
    assert db.events.count(EventFilter(session_id="a1")) > 0
    db.close()
    assert SECRET.encode() not in raw_bytes(db_file)


WORDS = ["window", "seat", "peanut", "allergy", "tea", "monday", "report", "doctor", "train"]
SESSIONS = ("a", "b", "c")


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
            st.sampled_from(SESSIONS),
        ),
        min_size=1,
        max_size=25,
    ),
    purged=st.sampled_from(SESSIONS),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
)
def test_purged_session_never_comes_back_and_others_never_leak(
    steps: list[tuple[str, str]], purged: str, query: str
) -> None:
    atlas, _ = build(max_nodes=None, working_memory_size=2)
    owner: dict[str, str] = {}
    for content, session in steps:
        owner[atlas.add(f"{content} [{session}]", session_id=session).id] = session
    if purged in atlas.sessions():
        atlas.end_session(purged, mode="purge")
    for session in SESSIONS:
        if session not in atlas.sessions():
            continue
        for hit in atlas.retrieve(query, top_k=20, session_id=session, reinforce=False):
            assert owner[hit.node.id] == session
        for hit in atlas.retrieve(
            query, top_k=20, session_id=session, cross_session=True, reinforce=False
        ):
            assert owner[hit.node.id] != purged
    assert all(owner[n.id] != purged for n in atlas.nodes())
    assert traces_in_atlas(atlas, f"[{purged}]") == []
