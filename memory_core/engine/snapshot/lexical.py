"""The BM25 index's postings in a snapshot, so a load need not tokenise every text.

Indexing the texts of 100k memories was ~400 ms of a ~1 s load (docs/performance.md,
"session 13"); reading the postings back as arrays takes a fraction of that and gives
the same index. Members: ``lexical_terms_offsets`` / ``lexical_terms_blob`` (the terms,
utf-8), ``lexical_counts`` (int64, each term's postings), ``lexical_rows`` (int32, the
memory row of each posting, term after term) and ``lexical_tf`` (int32, its term
frequency). The header's ``lexical`` names the tokenizer that made them and the CRC-32 of
the ``contents_blob`` they index; it is null, or absent in older files, when none were
stored. Postings made by another tokenizer, or for other texts (a tool that rewrote the
contents), are not used: the load indexes the texts as it always did.

Only the arrays' shapes and ranges are checked: every posting names a row of the file,
so a restored index never holds a memory the file lacks. That the postings are those of
the texts is what the CRC binds; a forged file whose postings disagree with its texts
ranks BM25 wrongly (removals skip terms they do not find).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from memory_core.engine.index.lexical import TOKENIZER, PostingColumns, posting_columns
from memory_core.engine.snapshot.layout import Refusal, pack_texts, read_texts

TERMS = "lexical_terms"
MEMBERS = (f"{TERMS}_offsets", f"{TERMS}_blob", "lexical_counts", "lexical_rows", "lexical_tf")


def capture(frozen: dict[str, Any], row_of: np.ndarray) -> dict[str, np.ndarray] | None:
    """The members for a ``LexicalIndex.freeze`` whose slots map to file rows by ``row_of``;
    None when a posting names a slot the file does not hold (then none are written and a
    load indexes the texts)."""
    columns = posting_columns(frozen)
    if len(columns.slots) and (columns.slots.max() >= len(row_of)):
        return None
    rows = row_of[columns.slots]
    if (rows < 0).any():
        return None
    offsets, blob = pack_texts(columns.terms)
    return dict(
        zip(
            MEMBERS,
            (offsets, blob, columns.counts, rows.astype(np.int32), columns.tf),
            strict=True,
        )
    )


def header(contents_blob: np.ndarray) -> dict[str, Any]:
    """The header's ``lexical`` entry for postings written beside ``contents_blob``."""
    return {"tokenizer": TOKENIZER, "contents_crc32": zlib.crc32(contents_blob.data)}


def check(entry: Any, arrays: dict[str, np.ndarray], n: int) -> PostingColumns | None:
    """The stored postings (rows as slots) when usable; None when the file has none or
    they were made by another tokenizer or for other texts; ``Refusal`` when malformed."""
    if entry is None:
        return None
    if not (
        isinstance(entry, dict)
        and isinstance(entry.get("tokenizer"), str)
        and isinstance(entry.get("contents_crc32"), int)
        and not isinstance(entry["contents_crc32"], bool)
    ):
        raise Refusal(
            f"lexical is {entry!r}; allowed: null or {{'tokenizer': str, 'contents_crc32': int}}"
        )
    if entry["tokenizer"] != TOKENIZER or entry["contents_crc32"] != zlib.crc32(
        arrays["contents_blob"].data
    ):
        return None
    for name in MEMBERS:
        if name not in arrays:
            raise Refusal(f"lacks the member {name!r}")
    terms = read_texts(arrays, TERMS)
    counts, rows, tf = (arrays[name] for name in MEMBERS[2:])
    if counts.dtype != np.int64 or counts.shape != (len(terms),) or (counts < 1).any():
        raise Refusal(f"lexical_counts must be {len(terms)} int64 counts >= 1, one per term")
    total = int(counts.sum())
    for name, values in (("lexical_rows", rows), ("lexical_tf", tf)):
        if values.dtype != np.int32 or values.shape != (total,):
            raise Refusal(f"{name} must be int32 of shape ({total},), as lexical_counts sum")
    if total and (rows.min() < 0 or rows.max() >= n):
        raise Refusal(f"lexical_rows must hold memory rows from 0 to {n - 1}")
    if total and tf.min() < 1:
        raise Refusal("lexical_tf must hold term frequencies >= 1")
    if not all(terms) or len(set(terms)) != len(terms):
        raise Refusal("lexical_terms must be distinct non-empty terms")
    return PostingColumns(terms, counts, rows, tf)
