"""The shared reader of outside files: every class of bad file is one clear UploadError."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.boundary import (
    FileLimits,
    csv_rows,
    excerpt,
    json_depth,
    json_rows,
    json_value,
    mask_secrets,
)
from memory_core.errors import AtlasError, UploadError

LIMITS = FileLimits(max_bytes=200_000, max_depth=16, max_field_chars=1_000, max_rows=50)
COLUMNS = ("key", "content")


def nested(depth: int, opener: str = "[", closer: str = "]") -> bytes:
    return (opener * depth + closer * depth).encode()


@given(depth=st.integers(17, 20_000), brackets=st.sampled_from(["[]", "{}"]))
@settings(max_examples=25, deadline=None)
def test_any_nesting_past_the_limit_is_refused_before_parsing(depth: int, brackets: str) -> None:
    opener, closer = brackets
    body = (opener + '"a":') * depth + "1" + closer * depth if opener == "{" else None
    data = body.encode() if body else nested(depth)
    with pytest.raises(UploadError, match=rf"nests {depth:,} levels deep; at most 16") as caught:
        json_value("deep.json", data, LIMITS)
    assert caught.value.file == "deep.json"


@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
        max_leaves=30,
    )
)
@settings(max_examples=60, deadline=None)
def test_depth_scan_agrees_with_the_parser(value: object) -> None:
    text = json.dumps(value)

    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max(map(depth, v), default=0)
        if isinstance(v, dict):
            return 1 + max(map(depth, v.values()), default=0)
        return 0

    assert json_depth(text) == depth(value)


def test_brackets_inside_strings_and_escapes_do_not_count() -> None:
    assert json_depth(json.dumps({"a": "[[[{{{", "b": '\\"[[', "c": ["\\"]})) == 2


@given(size=st.integers(1_001, 300_000))
@settings(max_examples=10, deadline=None)
def test_a_huge_field_is_named_measured_and_never_echoed(size: int) -> None:
    data = json.dumps([{"key": "k", "content": "x" * size}]).encode()
    with pytest.raises(UploadError) as caught:
        json_rows("big.json", data, LIMITS, wrapper="items")
    message = str(caught.value)
    assert len(message) < 200, message
    if size + 40 > LIMITS.max_bytes:
        assert "bytes are allowed" in message
    else:
        assert message.startswith("big.json: $[0].content: has ") and "at most 1,000" in message


@pytest.mark.parametrize(
    ("data", "where", "says"),
    [
        (b"", "file", "is empty"),
        (b"  \n ", "file", "only whitespace"),
        (bytes(range(256)), "encoding", "binary"),
        ("[1]".encode("utf-16"), "encoding", "UTF-16"),
        ('["caf\u00e9"]'.encode("latin-1"), "encoding", "line 1: byte 0xe9"),
        (b'{"a": 1,}', "line 1", "invalid JSON"),
        (b"[NaN]", "$", "NaN"),
        (b'{"a": 1, "a": 2}', "$", "duplicate JSON key"),
        (b'{"rows": []}', "$", 'must be a list of items or {"items": [...]}'),
        (b"[" + b"1," * 60 + b"1]", "rows", "has 61 rows; at most 50"),
        (b"x" * 200_001, "file", "200,001 bytes"),
    ],
)
def test_every_class_of_bad_json_file(data: bytes, where: str, says: str) -> None:
    with pytest.raises(UploadError) as caught:
        json_rows("f.json", data, LIMITS, wrapper="items")
    assert caught.value.field == where and says in caught.value.problem
    assert isinstance(caught.value, AtlasError)


@pytest.mark.parametrize(
    ("data", "where", "says"),
    [
        (b"", "file", "is empty: expected a header row with columns from: key, content"),
        (b"\xef\xbb\xbf\r\n", "file", "is empty: expected a header row"),
        (b'key,content\nk1,"never closed\nk2,x\n', "line 2", "unterminated quoted field"),
        (b"key,colour\nk,red\n", "columns", "unknown 'colour'"),
        (b"key,content\nk,a,b\n", "line 2", "has 3 cells; the header has 2"),
        (b"key,content\nk," + b"x" * 1_001 + b"\n", "line 2", "longer than 1,000 characters"),
        (b"key,content\n" + b"k,v\n" * 51, "rows", "has 51 rows"),
        (b"\x00\x01binary", "encoding", "binary"),
    ],
)
def test_every_class_of_bad_csv_file(data: bytes, where: str, says: str) -> None:
    with pytest.raises(UploadError) as caught:
        csv_rows("f.csv", data, LIMITS, columns=COLUMNS)
    assert caught.value.field == where and says in caught.value.problem, str(caught.value)


def test_good_files_read() -> None:
    assert csv_rows("f.csv", b"key,content\nk,hello\nj,\n", LIMITS, columns=COLUMNS) == [
        {"key": "k", "content": "hello"},
        {"key": "j", "content": ""},
    ]
    assert json_rows("f.json", b'{"items": [{"a": 1}]}', LIMITS, wrapper="items") == [{"a": 1}]


@given(st.text(min_size=0, max_size=5_000))
@settings(max_examples=50, deadline=None)
def test_excerpt_is_short_whatever_the_value(value: str) -> None:
    shown = excerpt(value)
    assert len(shown) <= 100
    if len(repr(value)) > 62:  # escapes count: an invisible character is shown as \\x1f
        assert f"({len(value):,} characters)" in shown
    else:
        assert shown == repr(value)


@given(
    password=st.text(
        st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=30
    ).filter(lambda p: "'" not in p and '"' not in p and "@" not in p)
)
@settings(max_examples=50, deadline=None)
def test_passwords_in_urls_are_masked(password: str) -> None:
    url = f"postgresql+psycopg://user:{password}@127.0.0.1:1/db"
    masked = mask_secrets(f"cannot open {url!r}: connection refused")
    assert "user:***@127.0.0.1:1/db" in masked
    assert f":{password}@" not in masked
