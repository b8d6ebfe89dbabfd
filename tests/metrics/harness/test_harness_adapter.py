"""Real harness-evals metrics through the adapter give the values the metrics give on their own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from harness_evals.core.eval_case import EvalCase as HarnessCase
from harness_evals.core.types import Message as HarnessMessage
from harness_evals.core.types import ToolCall as HarnessToolCall
from harness_evals.metrics import (
    ContainsMetric,
    ExactMatchMetric,
    JsonDiffMetric,
    PIIMetric,
    SchemaValidationMetric,
    ToolCorrectnessMetric,
    TurnEfficiencyMetric,
)
from pydantic import ValidationError

from evald.case import Dimension, Document, EvalCase, Message, ToolCall
from evald.metrics.base import BaseMetric
from evald.metrics.harness_case import to_harness_case
from evald.metrics.registry import get_metric_class

ORDER = {"id": 7, "items": ["tea", "milk"], "total": 4.5}

#: (kind, options, evald case, the same case written by hand for harness-evals, the harness metric on its own)
CASES: list[tuple[str, dict[str, Any], EvalCase, HarnessCase, Any]] = [
    ("harness:ExactMatchMetric", {}, EvalCase(input="q", output="Paris", expected="Paris"),
     HarnessCase(input="q", output="Paris", expected="Paris"), ExactMatchMetric()),
    ("harness:ExactMatchMetric", {}, EvalCase(input="q", output="Paris", expected="paris"),
     HarnessCase(input="q", output="Paris", expected="paris"), ExactMatchMetric()),
    ("harness:ExactMatchMetric", {"case_sensitive": False}, EvalCase(input="q", output="Paris", expected="paris"),
     HarnessCase(input="q", output="Paris", expected="paris"), ExactMatchMetric(case_sensitive=False)),
    ("harness:ContainsMetric", {}, EvalCase(input="q", output="It is Paris.", expected="Paris"),
     HarnessCase(input="q", output="It is Paris.", expected="Paris"), ContainsMetric()),
    ("harness:ContainsMetric", {"negate": True, "forbidden": "SECRET", "case_sensitive": False},
     EvalCase(output="the secret is 42"), HarnessCase(input="", output="the secret is 42"),
     ContainsMetric(negate=True, forbidden="SECRET", case_sensitive=False)),
    ("harness:JsonDiffMetric", {}, EvalCase(output={**ORDER, "total": 5.0}, expected=ORDER),
     HarnessCase(input="", output={**ORDER, "total": 5.0}, expected=ORDER), JsonDiffMetric()),
    ("harness:SchemaValidationMetric", {"schema": {"type": "object", "required": ["id"]}},
     EvalCase(output='{"name": "x"}'), HarnessCase(input="", output='{"name": "x"}'),
     SchemaValidationMetric(schema={"type": "object", "required": ["id"]})),
    ("harness:ToolCorrectnessMetric", {"mode": "subset"},
     EvalCase(tool_calls=(ToolCall("search", {"q": "x"}), ToolCall("answer")), expected_tools=("search", "book")),
     HarnessCase(input="", output=None,  # type: ignore[arg-type]  # harness types output as required
                 tool_calls=[HarnessToolCall("search", {"q": "x"}), HarnessToolCall("answer")],
                 expected_tools=["search", "book"]),
     ToolCorrectnessMetric(mode="subset")),
    ("harness:PIIMetric", {}, EvalCase(output="Mail jane.doe@example.com or call +1 415 555 0132"),
     HarnessCase(input="", output="Mail jane.doe@example.com or call +1 415 555 0132"), PIIMetric()),
    ("harness:TurnEfficiencyMetric", {},
     EvalCase(messages=(Message("user", "hi"), Message("assistant", "hello"), Message("user", "book it"),
                        Message("assistant", "done")), metadata={"expected_turns": 2}),
     HarnessCase(input="", output="", messages=[HarnessMessage("user", "hi"), HarnessMessage("assistant", "hello"),
                                                HarnessMessage("user", "book it"), HarnessMessage("assistant", "done")],
                 metadata={"expected_turns": 2}),
     TurnEfficiencyMetric()),
]


@pytest.mark.parametrize(("kind", "options", "case", "harness_case", "harness_metric"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_adapted_score_equals_the_harness_score(
    kind: str, options: dict[str, Any], case: EvalCase, harness_case: HarnessCase, harness_metric: Any
) -> None:
    expected = harness_metric.measure(harness_case)
    metric = get_metric_class(kind)(options=options)
    score = metric.measure(case)
    assert score is not None
    assert (score.value, score.reason, dict(score.metadata)) == (expected.value, expected.reason,
                                                                 expected.metadata or {})
    assert score.passed is expected.passed and score.threshold == harness_metric.threshold
    assert score.name == kind and score.dimension is type(metric).dimension


def test_hand_computed_values() -> None:
    exact = get_metric_class("harness:ExactMatchMetric")()
    score = exact.measure(EvalCase(output="Paris", expected="paris"))
    assert score is not None and score.value == 0.0 and not score.passed  # case-sensitive by default
    tools = get_metric_class("harness:ToolCorrectnessMetric")(options={"mode": "subset"})
    score = tools.measure(EvalCase(tool_calls=(ToolCall("search"), ToolCall("answer")), expected_tools=("search",
                                                                                                      "book")))
    assert score is not None and score.value == 0.5  # subset: 1 of the 2 expected tools was called (search)
    score = get_metric_class("harness:TokenCostMetric")(options={"max_tokens": 1000}).measure(EvalCase(token_count=250))
    assert score is not None and score.value == pytest.approx(0.75)  # 1 - 250 / 1000


def test_generated_class_declares_the_contract() -> None:
    cls = get_metric_class("harness:ExactMatchMetric")
    assert issubclass(cls, BaseMetric) and cls is get_metric_class("harness:ExactMatchMetric")  # cached
    assert (cls.kind, cls.family, cls.dimension, cls.default_threshold) == (
        "harness:ExactMatchMetric", "harness", Dimension.CORRECTNESS, 1.0)
    assert cls.__name__ == "HarnessExactMatchMetric" and not cls.is_async
    assert cls.requires == ("output", "expected")
    assert cls.describe()["summary"] == (
        "harness-evals ExactMatchMetric: Check required equality or reject a configured forbidden answer.")
    assert set(cls.Options.model_fields) == {"case_sensitive", "negate", "forbidden"}
    assert all(f.description for f in cls.Options.model_fields.values())


@pytest.mark.parametrize(("kind", "dimension", "threshold"), [
    ("harness:PIIMetric", Dimension.SAFETY, 1.0),
    ("harness:TokenCostMetric", Dimension.PERFORMANCE, 0.5),
    ("harness:ToolCorrectnessMetric", Dimension.TRAJECTORY, 1.0),
    ("harness:JsonDiffMetric", Dimension.CORRECTNESS, 0.85),
])
def test_dimension_and_default_threshold_come_from_the_harness_catalog(
    kind: str, dimension: Dimension, threshold: float
) -> None:
    cls = get_metric_class(kind)
    assert (cls.dimension, cls.default_threshold) == (dimension, threshold)
    assert cls().harness_metric.threshold == threshold  # type: ignore[attr-defined]


def test_the_spec_threshold_reaches_the_harness_metric() -> None:
    metric = get_metric_class("harness:TokenCostMetric")(threshold=0.8, options={"max_tokens": 1000})
    assert metric.harness_metric.threshold == 0.8  # type: ignore[attr-defined]
    score = metric.measure(EvalCase(token_count=250))
    assert score is not None and score.value == pytest.approx(0.75) and not score.passed  # 0.75 < 0.8


def test_an_option_named_like_a_pydantic_attribute_keeps_its_name() -> None:
    cls = get_metric_class("harness:SchemaValidationMetric")
    metric = cls(options={"schema": {"type": "string"}})
    assert metric.harness_metric.schema == {"type": "string"}  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        cls(options={})  # schema is required by the harness constructor


@pytest.mark.parametrize("options", [
    {"case_sensitiv": False},  # unknown key
    {"case_sensitive": "maybe"},  # wrong type
    {"negate": True},  # the harness constructor's own check: forbidden is required with negate
    {"threshold": 0.5},  # the threshold is the spec's, not an option
    {"name": "x"},
])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        get_metric_class("harness:ExactMatchMetric")(options=options)


def test_case_mapping() -> None:
    case = EvalCase(
        input=None, output={"a": 1}, expected="x",
        context=(Document(id="d1", content="Paris is in France."), Document(id="d2")),
        messages=(Message("user", "hi"),
                  Message("assistant", None, tool_calls=(ToolCall("f", '{"q": 1}', "r", id="c1"),)),
                  Message("tool", "r", tool_call_id="c1", name="f")),
        tool_calls=(ToolCall("f", '{"q": 1}', "r", id="c1"), ToolCall("g", "not json")),
        expected_tools=("f",), latency_ms=12.5, token_count=30, input_tokens=20, output_tokens=10, cost_usd=0.01,
        retry_count=1, confidence=0.9, tags=("env:prod", "beta"), metadata={"model": "kept"}, trace_id="t1",
        model="m", error=True,
    )
    mapped = to_harness_case(case)
    assert (mapped.input, mapped.output, mapped.expected) == ("", {"a": 1}, "x")
    assert mapped.context == ["Paris is in France."]
    assert [(m.role, m.content) for m in mapped.messages] == [("user", "hi"), ("assistant", None), ("tool", "r")]
    assert mapped.messages[1].tool_calls == [HarnessToolCall("f", {"q": 1}, "r")]
    assert mapped.messages[2].metadata == {"tool_call_id": "c1", "name": "f"} and mapped.messages[0].tool_calls is None
    assert mapped.tool_calls == [HarnessToolCall("f", {"q": 1}, "r"), HarnessToolCall("g", "not json")]  # type: ignore[arg-type]
    assert mapped.expected_tools == ["f"]
    assert (mapped.latency_ms, mapped.token_count, mapped.input_tokens, mapped.output_tokens) == (12.5, 30, 20, 10)
    assert (mapped.cost_usd, mapped.retry_count, mapped.confidence) == (0.01, 1, 0.9)
    assert mapped.tags == {"env": "prod", "beta": "true"}
    assert mapped.metadata == {"model": "kept", "trace_id": "t1", "scope": "trace", "error": True}
    assert mapped.expected_tool_calls is None and mapped.runs is None


def test_an_empty_case_maps_to_nones() -> None:
    mapped = to_harness_case(EvalCase())
    assert mapped.input == "" and mapped.output is None
    assert mapped.context is None and mapped.messages is None and mapped.tool_calls is None
    assert mapped.expected_tools is None and mapped.tags is None
    assert mapped.metadata == {"scope": "trace"}


def test_runs_through_the_async_entry_point_like_the_scorer() -> None:
    metric = get_metric_class("harness:ContainsMetric")()
    score = asyncio.run(metric.a_measure(EvalCase(output="Paris!", expected="Paris")))
    assert score is not None and score.value == 1.0
