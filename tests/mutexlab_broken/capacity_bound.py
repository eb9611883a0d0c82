"""A broken greedy chain cover for the capacity audit: it joins an interval to the latest chain
whether or not that chain's last interval happened-before it, so its "chains" are not chains and
its bound can fall below the real load (test_capacity_audit.py shows the property catching it)."""

from __future__ import annotations


def chain_cover_bound(intervals, cap):
    if not intervals:
        return 0
    bound = max(iv.units for iv in intervals)  # one "chain" through everything
    return bound if bound <= cap else None
