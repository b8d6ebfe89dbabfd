"""The score table's rolling ``Window``: the newest bucket kept as native counts gives the same totals as a plain
list of buckets, whatever the gaps between counts (evald/exporters/prometheus_table.py)."""

from __future__ import annotations

import random
from collections import deque

import pytest

from evald.exporters.prometheus_table import Window


class ListWindow:
    """The reference: every bucket ``[index, passes, fails]`` in one deque, oldest first."""

    def __init__(self) -> None:
        self.buckets: deque[list[int]] = deque()

    def expire(self, oldest: int) -> None:
        while self.buckets and self.buckets[0][0] < oldest:
            self.buckets.popleft()

    def slide(self, index: int, keep: int, passed: bool) -> None:
        self.expire(index - keep + 1)
        if not self.buckets or self.buckets[-1][0] != index:
            self.buckets.append([index, 0, 0])
        self.buckets[-1][1 if passed else 2] += 1

    def totals(self) -> tuple[int, int]:
        return sum(b[1] for b in self.buckets), sum(b[2] for b in self.buckets)


@pytest.mark.parametrize("seed", range(20))
def test_totals_match_a_list_of_buckets_through_gaps_and_expiry(seed: int) -> None:
    rng = random.Random(seed)
    keep = rng.choice((1, 6, 60))
    window, reference = Window(), ListWindow()
    index = rng.randrange(1000)
    for _ in range(2000):
        index += rng.choice((0, 0, 0, 1, 1, 2, keep, keep + 5))  # mostly the same bucket, sometimes idle gaps
        passed = rng.random() < 0.7
        window.slide(index, keep, passed)
        reference.slide(index, keep, passed)
        assert window.totals() == reference.totals()
        assert len(window.buckets) + 1 <= keep  # bounded: closed buckets plus the newest
        if rng.random() < 0.05:  # what pass_rates and baseline_states do before reading totals
            oldest = index - keep + 1 + rng.randrange(keep + 2)
            window.expire(oldest)
            reference.expire(oldest)
            assert window.totals() == reference.totals()


def test_an_expired_newest_bucket_counts_nothing_and_the_window_restarts() -> None:
    window = Window()
    window.slide(10, 6, True)
    window.slide(10, 6, False)
    assert window.totals() == (1, 1)
    window.expire(11)
    assert window.totals() == (0, 0) and not window.buckets
    window.slide(20, 6, True)
    assert window.totals() == (1, 0)
