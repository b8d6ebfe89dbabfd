"""A labelled counter for hot paths that run on the event loop thread (no lock and no checks per increment).

prometheus_client's ``Counter.inc`` checks that the child is observable and that the amount is not negative, then
takes a mutex: four Python calls and a lock per increment. evald increments some counters for every case or trace
(``evald_cases_total``, ``evald_content_capture_cases_total``, ``evald_scored_cases_total``,
``evald_metric_skips_total``) and only from the event loop thread. ``LoopCounter`` is written from that thread alone
and read by the registry's ``collect`` from the scrape thread (an int read is atomic under the GIL): a scrape sees
every increment made before it. Exposed exactly like a prometheus_client ``Counter`` without ``*_created`` series
(evald's default, evald/telemetry.py). Amounts are not checked: callers pass positive counts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector


class LoopCounterChild:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1) -> None:
        self.value += amount


class LoopCounter(Collector):
    """``name`` without ``_total`` (as for ``Counter``); ``labels(*values)`` returns the child to ``inc``."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], registry: CollectorRegistry) -> None:
        self._name = name
        self._doc = documentation
        self._labelnames = tuple(labelnames)
        self._children: dict[tuple[str, ...], LoopCounterChild] = {}
        registry.register(self)

    def labels(self, *values: str) -> LoopCounterChild:
        if len(values) != len(self._labelnames):
            raise ValueError(f"{self._name}: {len(self._labelnames)} label values expected, got {len(values)}")
        key = tuple(str(v) for v in values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = LoopCounterChild()
        return child

    def describe(self) -> list[Metric]:
        return [CounterMetricFamily(self._name, self._doc, labels=self._labelnames)]

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self._name, self._doc, labels=self._labelnames)
        for values, child in list(self._children.items()):
            family.add_metric(list(values), child.value)
        yield family
