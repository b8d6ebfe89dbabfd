"""LoopHistogram exposes exactly what a prometheus_client Histogram would."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram, generate_latest

from evald.loop_histogram import LoopHistogram

BUCKETS = (0.001, 0.01, 0.1, 1.0)


def test_exposition_matches_prometheus_client_histogram() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    fast = LoopHistogram("evald_x_seconds", "Doc.", "metric", BUCKETS, ours)
    reference = Histogram("evald_x_seconds", "Doc.", ["metric"], buckets=BUCKETS, registry=theirs)
    for metric, value in [("a", 0.0005), ("a", 0.01), ("a", 0.5), ("b", 7.0), ("a", 1.0)]:
        fast.labels(metric).observe(value)
        reference.labels(metric).observe(value)
    expected = [line for line in generate_latest(theirs).decode().splitlines() if "_created" not in line]
    assert generate_latest(ours).decode().splitlines() == expected


def test_an_unobserved_histogram_exposes_only_its_help_and_type() -> None:
    registry = CollectorRegistry()
    LoopHistogram("evald_y_seconds", "Doc.", "metric", BUCKETS, registry)
    lines = generate_latest(registry).decode().splitlines()
    assert lines == ["# HELP evald_y_seconds Doc.", "# TYPE evald_y_seconds histogram"]
