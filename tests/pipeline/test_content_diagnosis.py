"""Content-capture diagnosis: the bounded counter and the WARN that names the switch."""

from __future__ import annotations

import logging

import pytest

from evald.pipeline.content_diagnosis import ContentDiagnosis
from evald.telemetry import Telemetry
from tests.metrics.test_requirements import case


def count(tm: Telemetry, service: str, instrumentation: str, content: str) -> float:
    labels = {"service_name": service, "instrumentation": instrumentation, "content": content}
    return tm.registry.get_sample_value("evald_content_capture_cases_total", labels) or 0.0


def test_counts_by_service_instrumentation_and_status_and_warns_once_with_the_switch(
        caplog: pytest.LogCaptureFixture) -> None:
    tm = Telemetry()
    diagnosis = ContentDiagnosis(tm)
    none = case(service_name="chat", metadata={"content_capture": "none", "instrumentation": "otel-genai"})
    full = case(service_name="chat", metadata={"content_capture": "full", "instrumentation": "otel-genai"})
    with caplog.at_level(logging.WARNING, logger="evald.pipeline.content_diagnosis"):
        diagnosis.observe_all([none, none, full, case(), none])
    assert count(tm, "chat", "otel-genai", "none") == 3 and count(tm, "chat", "otel-genai", "full") == 1
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1  # rate-limited per service and instrumentation
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only" in warnings[0]
    assert "'chat'" in warnings[0] and "missing_input" in warnings[0]


def test_masked_names_the_marker_and_the_library(caplog: pytest.LogCaptureFixture) -> None:
    diagnosis = ContentDiagnosis(Telemetry())
    masked = case(service_name="rag", metadata={"content_capture": "masked", "instrumentation": "openinference",
                                                "mask_marker": "__REDACTED__"})
    with caplog.at_level(logging.WARNING, logger="evald.pipeline.content_diagnosis"):
        diagnosis.observe(masked)
    [message] = [r.getMessage() for r in caplog.records]
    assert "__REDACTED__" in message and "OPENINFERENCE_HIDE_INPUTS=false" in message


def test_series_are_bounded() -> None:
    tm = Telemetry()
    diagnosis = ContentDiagnosis(tm, max_series=3)
    for i in range(10):
        diagnosis.observe(case(service_name=f"svc-{i}", metadata={"content_capture": "full",
                                                                  "instrumentation": "openllmetry"}))
    assert count(tm, "other", "openllmetry", "full") == 7
    assert sum(count(tm, f"svc-{i}", "openllmetry", "full") for i in range(10)) == 3
