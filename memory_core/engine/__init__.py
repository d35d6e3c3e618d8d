"""The engine: the atlas, its columnar table, indexes, retrieval, decay, forgetting, events and snapshots.

It imports nothing from the store, harness, review, agent or dashboard parts (tests/unit/test_layout.py).
"""
