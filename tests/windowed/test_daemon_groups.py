"""``evald run`` as a subprocess, K runs of one probe sent by the real OpenTelemetry SDK exporter: the group score
arrives in Prometheus on the latest run, and the calibration gauges carry the window's values."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

from tests.integration.daemon import Daemon
from tests.integration.test_daemon_e2e import value, wait_for
from tests.windowed.probe import CONFIG_METRICS, EXPECTED, RUNS, send_run

pytestmark = pytest.mark.integration

CONFIG = "assembly: { settle: 200ms, decision_wait: 5s }\npipeline: { workers: 1, shutdown_timeout: 5s }\n" + (
    CONFIG_METRICS)


def test_group_score_and_calibration_gauges(tmp_path: Path) -> None:
    with Daemon(tmp_path, CONFIG) as daemon:
        for run in RUNS:  # one provider (and exporter) per run: its shutdown flushes the run
            send_run(OTLPSpanExporter(endpoint=f"127.0.0.1:{daemon.grpc_port}", insecure=True), run)
        text = wait_for(daemon, lambda t: value(t, "evald_windowed_scores_total", metric="prompt_robustness") >= 1)
        # one score per group, exported like any other score of a case
        for kind in ("outcome_consistency", "prompt_robustness"):
            assert value(text, "evald_score_count", metric=kind) == 1
            assert value(text, "evald_score_sum", metric=kind) == pytest.approx(EXPECTED[kind])
        assert value(text, "evald_evaluations_total", metric="outcome_consistency", outcome="fail") == 1  # < 0.8
        # the windows' gauges, labelled by service and model only
        for kind in ("calibration", "discrimination", "brier_score"):
            assert value(text, "evald_window_score", metric=kind, service_name="probe") == pytest.approx(
                EXPECTED[kind])
            assert value(text, "evald_window_cases", metric=kind, service_name="probe") == len(RUNS)
        assert value(text, "evald_score_count", metric="canary_quality") == len(RUNS)
        assert "trace_id=" not in text
        assert daemon.stop() == 0
