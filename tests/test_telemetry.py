"""Self-metric helpers (evald/telemetry.py): the caches of bound counter children used on hot paths."""

from __future__ import annotations

from evald.telemetry import LabelCache, LabelSetCache, Telemetry


def test_label_set_cache_binds_each_label_set_once_and_counts_into_its_series() -> None:
    tm = Telemetry()
    cache = LabelSetCache(tm.not_evaluable)
    first = cache.get("no_output", "genai_semconv", "trace")
    assert cache.get("no_output", "genai_semconv", "trace") is first  # bound once, not labels() per call
    first.inc()
    cache.get("no_output", "genai_semconv", "trace").inc(2)
    cache.get("no_input", "openinference", "llm_call").inc()
    sample = tm.registry.get_sample_value
    assert sample("evald_cases_not_evaluable_total",
                  {"reason": "no_output", "convention": "genai_semconv", "scope": "trace"}) == 3
    assert sample("evald_cases_not_evaluable_total",
                  {"reason": "no_input", "convention": "openinference", "scope": "llm_call"}) == 1
    assert sample("evald_cases_not_evaluable_total",
                  {"reason": "no_input", "convention": "genai_semconv", "scope": "trace"}) is None  # nothing made


def test_label_set_cache_is_bounded_and_starts_over_without_losing_counts() -> None:
    tm = Telemetry()
    cache = LabelSetCache(tm.metric_skips, limit=3)
    for i in range(10):
        cache.get(f"metric_{i}", "not_applicable").inc()
        assert len(cache._children) <= 3
    cache.get("metric_0", "not_applicable").inc()  # bound again after the cache started over: same series
    assert tm.registry.get_sample_value("evald_metric_skips_total",
                                        {"metric": "metric_0", "reason": "not_applicable"}) == 2


def test_label_cache_binds_a_one_label_child_once() -> None:
    tm = Telemetry()
    cache = LabelCache(tm.cases)
    assert cache.get("trace") is cache.get("trace") and cache.get("trace") is not cache.get("llm_call")
    cache.get("trace").inc(4)
    assert tm.registry.get_sample_value("evald_cases_total", {"scope": "trace"}) == 4
