"""Hostile arguments to every public entry point (hypothesis).

Each call either works or raises an ``AtlasError`` subclass whose message names the
problem; a call that fails leaves the atlas exactly as it was (nodes, edges, weights,
counters). Covered: the atlas API (add, add_many, retrieve, link, set_status, pin,
end_session, similar), ``AtlasConfig.from_mapping``, the session-file loader, snapshot
loading and knowledge imports. Every test prints how many inputs it tried.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memory_core import AtlasConfig, ElasticMemoryAtlas, HashingEmbedder
from memory_core.engine.config import field_names
from memory_core.engine.snapshot.layout import HEADER, HEADER_KEYS
from memory_core.errors import AtlasError, ConfigError, InputError, SessionFormatError
from memory_core.harness.session_format import load_conversation
from memory_core.knowledge import KnowledgeBase
from memory_core.knowledge.importer import import_records, read_records
from memory_core.store.engine import open_database

from .conftest import build

TRIED: Counter[str] = Counter()
FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.binary(max_size=16),
)
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
        st.tuples(inner, inner),
    ),
    max_leaves=8,
)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**64), 2**64),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=30),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=10), inner, max_size=5)
    ),
    max_leaves=20,
)


def maybe(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly junk, sometimes a valid value, so that one bad field at a time is reached."""
    return st.one_of(valid, junk)


def fingerprint(atlas: ElasticMemoryAtlas) -> tuple[Any, ...]:
    nodes = tuple(
        (n.id, n.content, n.session_id, n.weight, n.status, n.pinned, n.access_count, n.metadata)
        for n in atlas.nodes()
    )
    edges = tuple(
        sorted((e.source_id, e.target_id, e.relation.value, e.strength) for e in atlas.edges())
    )
    return atlas.stats(), nodes, edges, tuple(atlas.sessions())


def seeded() -> tuple[ElasticMemoryAtlas, list[str]]:
    atlas, _ = build(max_nodes=50, decay_interval_seconds=0, max_content_chars=500)
    ids = [
        atlas.add(text, session_id=session).id
        for text, session in (
            ("the user prefers window seats", "s1"),
            ("peanut allergy, carry an epipen", "s1"),
            ("meeting moved to monday", "s2"),
        )
    ]
    return atlas, ids


def check_failure(exc: BaseException, before: tuple[Any, ...], atlas: ElasticMemoryAtlas) -> None:
    assert isinstance(exc, AtlasError), f"{type(exc).__name__}: {exc}"
    assert str(exc).strip(), "error without a message"
    assert fingerprint(atlas) == before, "a failed call changed the atlas"


def attempt(name: str, atlas: ElasticMemoryAtlas, call: Callable[[], object]) -> None:
    before = fingerprint(atlas)
    TRIED[name] += 1
    try:
        call()
    except Exception as exc:
        TRIED[f"{name}:refused"] += 1
        check_failure(exc, before, atlas)


ids_or_junk = st.one_of(st.sampled_from([0, 1, 2]), junk)


def resolve(ids: list[str], value: Any) -> Any:
    """Integers 0-2 stand for existing ids (so valid targets are reached too)."""
    return (
        ids[value]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 3
        else value
    )


@FAST
@given(
    content=maybe(st.text(min_size=1, max_size=60)),
    session=maybe(st.sampled_from(["s1", "s2", "new"])),
    kind=maybe(st.sampled_from(["session", "fact", "summary", "preference"])),
    metadata=maybe(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)),
    importance=maybe(st.floats(0, 1)),
    confidence=maybe(st.floats(0, 1)),
    ttl=maybe(st.floats(0, 100)),
    provenance=maybe(st.lists(st.text(max_size=5), max_size=2)),
    links=st.one_of(st.none(), st.lists(ids_or_junk, max_size=2)),
    embedding=st.one_of(
        st.none(), st.none(), junk, st.lists(st.floats(), min_size=64, max_size=64)
    ),
)
def test_add_accepts_or_refuses_cleanly(
    content: Any,
    session: Any,
    kind: Any,
    metadata: Any,
    importance: Any,
    confidence: Any,
    ttl: Any,
    provenance: Any,
    links: Any,
    embedding: Any,
) -> None:
    atlas, ids = seeded()
    links = None if links is None else [resolve(ids, v) for v in links]
    attempt(
        "add",
        atlas,
        lambda: atlas.add(
            content,
            session_id=session,
            kind=kind,
            metadata=metadata,
            importance=importance,
            confidence=confidence,
            ttl_hours=ttl,
            provenance=provenance,
            links_to=links,
            embedding=embedding,
        ),
    )


@FAST
@given(
    texts=maybe(st.lists(maybe(st.text(min_size=1, max_size=30)), max_size=4)),
    session=maybe(st.just("s1")),
    metadatas=st.one_of(st.none(), junk),
    embeddings=st.one_of(st.none(), junk),
)
def test_add_many_is_all_or_nothing(
    texts: Any, session: Any, metadatas: Any, embeddings: Any
) -> None:
    atlas, _ = seeded()
    attempt(
        "add_many",
        atlas,
        lambda: atlas.add_many(
            texts, session_id=session, metadatas=metadatas, embeddings=embeddings
        ),
    )


@FAST
@given(
    query=maybe(st.text(min_size=1, max_size=40)),
    top_k=maybe(st.integers(1, 20)),
    session=st.one_of(st.none(), st.sampled_from(["s1", "s2", "nope"]), junk),
    cross=junk,
    kinds=st.one_of(st.none(), st.lists(maybe(st.sampled_from(["session", "fact"])), max_size=2)),
    since=st.one_of(st.none(), junk),
    until=st.one_of(st.none(), junk),
    metadata=st.one_of(st.none(), junk),
    embedding=st.one_of(st.none(), junk),
)
def test_retrieve_accepts_or_refuses_cleanly(
    query: Any,
    top_k: Any,
    session: Any,
    cross: Any,
    kinds: Any,
    since: Any,
    until: Any,
    metadata: Any,
    embedding: Any,
) -> None:
    atlas, _ = seeded()

    def call() -> None:
        hits = atlas.retrieve(
            query,
            top_k=top_k,
            session_id=session,
            cross_session=cross,
            kinds=kinds,
            since=since,
            until=until,
            metadata=metadata,
            reinforce=False,  # a successful read must not change the fingerprint either
            query_embedding=embedding,
        )
        assert len(hits) <= int(top_k)

    before = fingerprint(atlas)
    attempt("retrieve", atlas, call)
    after = fingerprint(atlas)
    assert after[1:] == before[1:]


@FAST
@given(
    op=st.sampled_from(["link", "set_status", "pin", "forget", "end_session", "similar", "get"]),
    a=ids_or_junk,
    b=ids_or_junk,
    extra=junk,
    choice=st.sampled_from(
        ["related_to", "contradicts", "deprecated", "superseded", "active", "purge", "fade"]
    ),
)
def test_graph_and_status_calls_accept_or_refuse_cleanly(
    op: str, a: Any, b: Any, extra: Any, choice: str
) -> None:
    atlas, ids = seeded()
    a, b = resolve(ids, a), resolve(ids, b)
    value = choice if isinstance(extra, bool) else extra
    calls: dict[str, Callable[[], object]] = {
        "link": lambda: atlas.link(
            a, b, value, strength=extra if isinstance(extra, float) else 0.5
        ),
        "set_status": lambda: atlas.set_status(a, value, reason="fuzz"),
        "pin": lambda: atlas.pin(a),
        "forget": lambda: atlas.forget(a),
        "end_session": lambda: atlas.end_session(
            a if not isinstance(extra, str) else "s1", mode=value
        ),
        "similar": lambda: atlas.similar(a, extra),
        "get": lambda: atlas.get(a),
    }
    attempt(op, atlas, calls[op])


# ---------------------------------------------------------------- configuration
config_keys = st.one_of(st.sampled_from(sorted(field_names())), st.text(max_size=12))


@settings(max_examples=150, deadline=None)
@given(values=st.dictionaries(config_keys, junk, max_size=5))
def test_config_from_random_mappings(values: dict[str, Any]) -> None:
    TRIED["config"] += 1
    try:
        config = AtlasConfig.from_mapping(values)
    except ConfigError as exc:
        TRIED["config:refused"] += 1
        assert exc.field in str(exc) and exc.allowed
        assert exc.field in values or exc.field in field_names()
        return
    assert isinstance(config, AtlasConfig)
    assert config == AtlasConfig.from_mapping(config.to_dict())  # a valid result round-trips


# ---------------------------------------------------------------- session files
@settings(max_examples=150, deadline=None)
@given(doc=json_values, wrap=st.booleans())
def test_session_loader_on_random_json(doc: Any, wrap: bool) -> None:
    if wrap:  # right envelope, random inside
        doc = {"format": "atlas-session/1", "id": "x", "sessions": doc}
    TRIED["session_file"] += 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        path.write_text(json.dumps(doc))
        try:
            load_conversation(path)
        except SessionFormatError as exc:
            TRIED["session_file:refused"] += 1
            assert exc.problems and all(p.strip() for p in exc.problems)
            assert str(path) in str(exc) or path.name in str(exc)


# ---------------------------------------------------------------- snapshots
@functools.cache
def snapshot_bytes() -> bytes:
    """A small valid snapshot (not a fixture: hypothesis would print it with every failure)."""
    atlas, _ = seeded()
    with tempfile.TemporaryDirectory() as folder:
        return atlas.save_snapshot(Path(folder) / "a.npz").read_bytes()


def _load(data: bytes) -> ElasticMemoryAtlas:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.npz"
        path.write_bytes(data)
        return ElasticMemoryAtlas.load_snapshot(path, embedder=HashingEmbedder(64))


@FAST
@given(data=st.binary(max_size=512), prefix=st.booleans())
def test_snapshot_from_random_bytes(data: bytes, prefix: bool) -> None:
    blob = (
        snapshot_bytes()[: len(data)] + data if prefix else data
    )  # the zip header, then garbage, then garbage
    TRIED["snapshot_bytes"] += 1
    with pytest.raises(InputError) as caught:
        _load(blob)
    assert "snapshot" in str(caught.value)


@settings(max_examples=60, deadline=None)
@given(
    patch=st.dictionaries(
        st.sampled_from(sorted(HEADER_KEYS | {"graph"})),  # every header key, the optional one too
        json_values,
        min_size=1,
        max_size=3,
    )
)
@example(patch={"counters": [None]})  # once loaded, then crashed stats()
def test_snapshot_with_random_metadata(patch: dict[str, Any]) -> None:
    """A well-formed archive whose header was tampered with: refused or loaded whole."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "a.npz"
        source.write_bytes(snapshot_bytes())
        with np.load(source, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        header = json.loads(bytes(arrays[HEADER]).decode())
        header.update(patch)
        arrays[HEADER] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        target = Path(folder) / "b.npz"
        np.savez(target, **arrays)
        blob = target.read_bytes()
    TRIED["snapshot_meta"] += 1
    try:
        atlas = _load(blob)
    except Exception as exc:
        TRIED["snapshot_meta:refused"] += 1
        assert isinstance(exc, AtlasError), f"{type(exc).__name__}: {exc}"
        return
    fingerprint(atlas)  # loaded: it must be a usable atlas
    atlas.stats()
    atlas.retrieve("window seat", reinforce=False)


# ---------------------------------------------------------------- knowledge imports
@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    db = open_database(f"sqlite:///{tmp_path_factory.mktemp('kb') / 'kb.db'}")
    yield KnowledgeBase(db.session, embedder=HashingEmbedder(64))
    db.close()


def _item_count(kb: KnowledgeBase) -> int:
    with kb.unit("count") as unit:
        return len(unit.items.items())


row_values = st.one_of(
    json_values,
    st.sampled_from(["policy.x", "2024-01-01", "first_party_system", "1.0", "0.5", ""]),
)
item_keys = st.sampled_from(
    [
        "key",
        "content",
        "source_kind",
        "source_name",
        "version",
        "effective_from",
        "expires_at",
        "confidence",
        "other",
    ]
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.one_of(st.dictionaries(item_keys, row_values, max_size=9), json_values), max_size=5
    ),
    as_csv=st.booleans(),
)
def test_knowledge_import_of_random_rows(
    knowledge: KnowledgeBase, rows: list[Any], as_csv: bool
) -> None:
    TRIED["knowledge_rows"] += len(rows)
    before = _item_count(knowledge)
    with tempfile.TemporaryDirectory() as folder:
        if as_csv:
            path = Path(folder) / "k.csv"
            columns = sorted({k for r in rows if isinstance(r, dict) for k in r}) or ["key"]
            lines = [",".join(columns)] + [
                ",".join(json.dumps(r.get(c, "")) if isinstance(r, dict) else "x" for c in columns)
                for r in rows
            ]
            path.write_text("\n".join(lines) + "\n")
        else:
            path = Path(folder) / "k.json"
            path.write_text(json.dumps({"items": rows}))
        try:
            report = import_records(knowledge, read_records(path), actor="fuzz")
        except InputError as exc:  # the whole file is unusable: nothing imported
            TRIED["knowledge_files:refused"] += 1
            assert exc.field and str(exc)
            assert _item_count(knowledge) == before
            return
    TRIED["knowledge_rows:refused"] += len(report.rejected_rows)
    assert len(report.imported) + len(report.rejected_rows) == len(rows)
    for error in report.errors:
        assert error.field and error.problem
    assert _item_count(knowledge) == before + len(report.imported)


def test_zz_report_inputs_tried() -> None:
    """Prints the totals docs/reliability.md quotes (runs last in this file)."""
    print(f"\nfuzz inputs tried: {dict(sorted(TRIED.items()))}")
    assert TRIED["add"] >= 100 or not TRIED  # -k selections run without the others
