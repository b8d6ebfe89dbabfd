"""A labelled histogram for hot paths that run on the event loop thread (no lock per observation).

prometheus_client's ``Histogram`` takes a mutex twice per ``observe`` (bucket and sum); on the scoring path that
is a measurable share of CPU. ``LoopHistogram`` is written only from the event loop thread and read by the
registry's ``collect`` from the scrape thread: a scrape may see an observation's bucket but not yet its sum (off
by one in-flight observation), never a torn or decreasing value. Exposed exactly like a Prometheus histogram.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily, Metric
from prometheus_client.registry import Collector


class LoopHistogramChild:
    __slots__ = ("_bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # per bucket, not cumulative; the last one is +Inf
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self._bounds, value)] += 1
        self.total += value


class LoopHistogram(Collector):
    def __init__(self, name: str, documentation: str, label_name: str, buckets: Sequence[float],
                 registry: CollectorRegistry) -> None:
        self._name = name
        self._doc = documentation
        self._label = label_name
        self._bounds = tuple(buckets)
        self._children: dict[str, LoopHistogramChild] = {}
        registry.register(self)

    def labels(self, value: str) -> LoopHistogramChild:
        child = self._children.get(value)
        if child is None:
            child = self._children[value] = LoopHistogramChild(self._bounds)
        return child

    def describe(self) -> list[Metric]:
        return [HistogramMetricFamily(self._name, self._doc, labels=[self._label])]

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self._name, self._doc, labels=[self._label])
        for value, child in list(self._children.items()):
            counts, total = list(child.counts), child.total
            cumulative, buckets = 0, []
            for bound, count in zip((*self._bounds, float("inf")), counts, strict=True):
                cumulative += count
                buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
            family.add_metric([value], buckets, total)
        yield family
