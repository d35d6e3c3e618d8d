"""The k largest of many scores, without a selection over all of them.

A BM25 query at 100k memories matches ~25k documents and keeps 40: an ``argpartition``
over the 25k cost more than scoring the postings did (numpy's introselect is slow on
arrays with many equal values; a tally over all slots is mostly zeros). A sample's k-th
largest is no larger than the whole's k-th largest, so one vectorised comparison keeps
the few hundred scores that can still be among the best, and only those are sorted.
"""

from __future__ import annotations

import numpy as np

SAMPLE = 4096
"""Scores sampled (evenly spaced) for the floor under the k-th largest."""
SMALL = 512
"""Up to this many scores, every positive one is sorted: the floor's own sort, mask and
comparisons cost more than they save (a replay's atlas holds ~150 memories). The same
answer either way: the floor only drops scores that cannot be among the ``k`` best."""
CUT_FROM = 256
"""Above this many scores over the floor (a long query at 100k leaves ~1,000), a
selection of the k-th largest float32 value cuts them before the stable sort: ~10 µs
instead of sorting all (~40 µs; docs/performance.md, session 14)."""
FLOAT32_MARGIN = 1e-6
"""Relative margin under the floor: scores are ranked as float32 once summed in float64,
and two float64 scores closer than this may round to the same float32."""


def largest(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest positive ``scores`` as float32 ranks them, best
    first, the lower position first among equals (so the answer does not depend on a
    selection algorithm's order); fewer when fewer are positive."""
    if len(scores) <= SMALL:
        near = (scores > 0).nonzero()[0]  # every candidate: no floor to look for
    else:
        sample = scores[:: max(1, len(scores) // SAMPLE)]
        sample = sample[sample > 0]
        sample.sort()  # a sort beats np.partition here (see above)
        floor = sample[-k] * (1.0 - FLOAT32_MARGIN) if 0 < k <= len(sample) else 0.0
        near = (scores >= floor if floor > 0 else scores > 0).nonzero()[0]
    ranked = scores[near].astype(np.float32)
    if len(ranked) > CUT_FROM and 0 < k < len(ranked):
        # every score at or above the k-th largest, in position order: what the stable
        # sort below ranks first, so the same answer (ties at the cut all kept)
        kth = np.partition(ranked, len(ranked) - k)[len(ranked) - k]
        kept = (ranked >= kth).nonzero()[0]
        near, ranked = near[kept], ranked[kept]
    order = (-ranked).argsort(kind="stable")[: max(k, 0)]
    best: np.ndarray = near[order]
    return best
