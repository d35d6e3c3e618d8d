"""One ``.npy`` member of a snapshot archive, read into ``plain_pages`` memory.

``np.load``'s archive reads each member into an array numpy allocates, so a large one
(the embeddings: 150 MB at 100k) is memory numpy asks huge pages for, and a first touch
of it may wait on the kernel: 0.07 to 1.0 s of kernel time for the same 100k load
(docs/performance.md, "Snapshot load at 100k"). This reads the same bytes, the same way
(the npy header, then the data in chunks through the zip's CRC check), into memory
that asks for nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memory_core.engine import plain_pages

_HEADERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}
_CHUNK = 1 << 20
"""Bytes read from the zip at a time (each read makes a ``bytes`` this large)."""


def read(npz: Any, name: str) -> np.ndarray:
    """The array of member ``name`` (without ``.npy``) of an open ``np.load`` archive;
    ``ValueError`` for anything ``np.load(allow_pickle=False)`` would refuse, and for a
    member that is not an ``.npy`` file (``np.load`` would return its bytes). A flipped
    byte fails the zip's CRC check (``BadZipFile``) when the last byte is read."""
    with npz.zip.open(f"{name}.npy") as member:
        version = np.lib.format.read_magic(member)
        if version not in _HEADERS:
            raise ValueError(f"npy format version {version} is not read")
        shape, fortran_order, dtype = _HEADERS[version](member)
        if dtype.hasobject:
            raise ValueError("Object arrays cannot be loaded when allow_pickle=False")
        stored = plain_pages.empty(shape[::-1] if fortran_order else shape, dtype)
        data = stored.reshape(-1).view(np.uint8).data
        for start in range(0, len(data), _CHUNK):
            want = min(_CHUNK, len(data) - start)
            if member.readinto(data[start : start + want]) != want:
                raise ValueError(
                    f"EOF: {name} holds fewer than the {len(data)} bytes its header gives"
                )
    return stored.T if fortran_order else stored
