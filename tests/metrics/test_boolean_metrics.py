"""Metrics that declare ``boolean = True`` only ever return 0 or 1 (exporters report them as pass/fail)."""

from __future__ import annotations

import asyncio

import pytest

from evald.case import Document, EvalCase, ToolCall
from evald.metrics.base import BaseMetric
from evald.metrics.remote import MetricUnavailable
from tests.metrics.test_contract import FULL_CASE, METRICS, build, ids

BOOLEAN = [cls for cls in METRICS if cls.boolean]
CASES = [
    FULL_CASE,
    EvalCase(input="q", output="not json {", expected="other", tool_calls=(ToolCall("rm", {"path": "/"}, None),),
             error=True, latency_ms=1e9, token_count=10**9),
    EvalCase(input="q", output="jane.doe@example.com sk-abcdefghijklmnopqrstuvwxyz0123456789"),
    EvalCase(input="q", output="a", context=(Document(id="d2"), Document(id="d1")), metadata={"relevant_ids": ["d1"]}),
]


def test_the_pass_fail_metrics_declare_it() -> None:
    kinds = {cls.kind for cls in BOOLEAN}
    assert {"exact_match", "json_valid", "regex", "error_free", "pii_leak", "secret_leak", "tool_called"} <= kinds


@pytest.mark.parametrize("cls", BOOLEAN, ids=ids)
def test_boolean_metrics_return_only_0_or_1(cls: type[BaseMetric]) -> None:
    metric = build(cls)
    scored = 0
    for case in CASES:
        try:
            score = asyncio.run(metric.a_measure(case)) if cls.is_async else metric.measure(case)
        except MetricUnavailable:  # a metric that needs a peer (webhook) is covered by its own tests
            continue
        assert score is None or score.value in (0.0, 1.0), (cls.kind, score)
        scored += score is not None
    assert scored, f"{cls.kind}: no case applies, so nothing was checked"
