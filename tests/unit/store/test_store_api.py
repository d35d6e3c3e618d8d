"""The store's public names are exactly ``__all__``, sorted, and all resolve."""

from __future__ import annotations

import memory_core.store as store


def test_public_names() -> None:
    assert store.__all__ == sorted(store.__all__)
    for name in store.__all__:
        assert getattr(store, name) is not None
    public = {n for n in vars(store) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(store, n)).__name__ == "module"}
    assert public - modules == set(store.__all__)
