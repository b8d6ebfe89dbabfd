"""LoopCounter exposes exactly what a prometheus_client Counter would (without ``*_created`` series)."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from evald.loop_counter import LoopCounter


def test_exposition_matches_prometheus_client_counter() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    fast = LoopCounter("evald_x_cases", "Doc.", ["metric", "reason"], ours)
    reference = Counter("evald_x_cases", "Doc.", ["metric", "reason"], registry=theirs)
    for labels, amount in [(("a", "r1"), 1), (("a", "r1"), 3), (("b", "r2"), 1), (("a", "r2"), 2.5)]:
        fast.labels(*labels).inc(amount)
        reference.labels(*labels).inc(amount)
    fast.labels("c", "r3").inc()
    reference.labels("c", "r3").inc()
    for render in (generate_latest, generate_openmetrics):
        expected = [line for line in render(theirs).decode().splitlines() if "_created" not in line]
        assert render(ours).decode().splitlines() == expected
    assert ours.get_sample_value("evald_x_cases_total", {"metric": "a", "reason": "r1"}) == 4.0


def test_an_unlabelled_use_and_a_wrong_label_count() -> None:
    registry = CollectorRegistry()
    counter = LoopCounter("evald_y", "Doc.", ["scope"], registry)
    empty = ["# HELP evald_y_total Doc.", "# TYPE evald_y_total counter"]  # as prometheus_client's Counter
    assert generate_latest(registry).decode().splitlines() == empty
    with pytest.raises(ValueError, match="1 label values expected"):
        counter.labels("a", "b")
    counter.labels("trace").inc()
    assert registry.get_sample_value("evald_y_total", {"scope": "trace"}) == 1.0
