"""The shutdown totals: read from the service's own counters; the balance and the unaccounted rest are explicit."""

from __future__ import annotations

from evald.exporters.sending_metrics import exporter_instruments
from evald.pipeline.accounting import shutdown_totals
from evald.telemetry import Telemetry


def test_totals_balance_by_reason_and_say_what_the_window_and_exporters_dropped() -> None:
    tm = Telemetry()
    tm.cases.labels("trace").inc(10)
    tm.cases.labels("llm_call").inc(5)
    tm.scored_cases.labels("trace").inc(6)
    tm.cases_sampled_out.labels("llm_call").inc(2)
    tm.cases_dropped.labels("shutdown").inc(3)
    tm.cases_dropped.labels("shutdown_in_flight").inc(1)
    tm.cases_dropped.labels("worker_error")  # a series at 0 is not listed
    tm.dropped_spans.labels("shutdown").inc(7)
    tm.dropped_spans.labels("late").inc(100)  # not a shutdown drop
    tm.export_failures.labels("langfuse", "timeout").inc(2)
    exporter_instruments(tm).dropped.labels("langfuse", "shutdown").inc(5)  # registered by the exporters
    totals = shutdown_totals(tm, no_metric=3)
    assert totals.unaccounted == 0 and totals.alarming
    assert totals.line() == (
        "cases 15 = scored 6 + dropped 4 (shutdown 3, shutdown_in_flight 1) + sampled out 2 + without metric 3; "
        "unaccounted 0; spans dropped by the assembly window at shutdown 7; "
        "exporter failures (cases): langfuse/timeout 2; exporter drops (scores): langfuse/shutdown 5")


def test_a_lost_case_shows_as_unaccounted_and_a_clean_stop_is_not_alarming() -> None:
    tm = Telemetry()
    tm.cases.labels("trace").inc(4)
    tm.scored_cases.labels("trace").inc(4)
    clean = shutdown_totals(tm, no_metric=0)
    assert (clean.unaccounted, clean.alarming) == (0, False)
    assert clean.line().endswith("exporter failures (cases): none; exporter drops (scores): none")
    tm.cases.labels("trace").inc()
    lost = shutdown_totals(tm, no_metric=0)
    assert (lost.unaccounted, lost.alarming) == (1, True) and "unaccounted 1" in lost.line()
