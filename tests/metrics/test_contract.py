"""Every registered metric honours the metric contract (evald/metrics/base.py, harness-evals' rules)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

import evald
from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.registry import BUILTIN_METRICS, all_metric_classes
from evald.metrics.remote import MetricUnavailable

PACKAGE = Path(evald.__file__).resolve().parent
METRICS = all_metric_classes()

#: options for metrics whose Options model has required fields (add one when a new metric needs it)
SAMPLE_OPTIONS: dict[str, dict[str, Any]] = {
    "regex": {"pattern": "Paris"},
    "geval": {"criteria": "The answer is correct and complete."},
    "latency": {"max_ms": 1000},
    "token_usage": {"max_tokens": 1000},
    "cost": {"max_usd": 1.0},
    "time_to_first_token": {"max_ms": 1000},
    "args_valid": {"policy": {"tools": {"search": {"required": ["q"], "arguments": {"q": {"type": "string"}}}}}},
    "sequence_valid": {"rules": [{"type": "require", "tool": "search"}]},
    "tool_blocklist": {"blocklist": ["admin_*"]},
    "tool_called": {"tool": "search"},
    "tool_not_called": {"tool": "delete_*"},
    "tool_called_with": {"tool": "search", "arguments": {"q": "capital of France"}},
    "tool_call_order": {"order": ["search", "answer"]},
    "steps_below": {"max_steps": 5},
    "json_schema": {"schema": {"type": "string"}},
    "ordinal_distance": {"scale": ["bad", "ok", "good"]},
    "conversation_resolution": {"resolved_patterns": ["Paris"]},
    "webhook": {"url": "http://127.0.0.1:9/score", "timeout": 2},  # nothing listens: MetricUnavailable
    "embedding_cosine": {"provider": {"kind": "hashing"}},
    "bertscore_like": {"provider": {"kind": "hashing"}},
    "rubric_judge": {"rubric": {1: "wrong", 2: "partly right", 3: "right"}},
    "llm_as_judge": {"template": "Does {{output}} answer {{input}}?"},
    "composite": {"weights": {"exact_match": 1.0}},
    "compliance": {"policies": ["Never quote a price."]},
    "prompt_alignment": {"instructions": ["Answer in one word."]},
    "topic_adherence": {"topics": ["geography"]},
    "dag": {"root": "answers", "nodes": {"answers": {"question": "Does the output answer the input?", "yes": 1.0,
                                                      "no": 0.0}}},
}

FULL_CASE = EvalCase(
    input="What is the capital of France?", output="Paris", expected="Paris",
    context=(Document(id="d1", content="Paris is the capital of France."),),
    messages=(Message("user", "What is the capital of France?"), Message("assistant", "Paris")),
    tool_calls=(ToolCall("search", {"q": "capital of France"}, "Paris", id="c1"),), expected_tools=("search",),
    latency_ms=1234.5, token_count=42, input_tokens=30, output_tokens=12, cost_usd=0.001, retry_count=0,
    trace_id="0af7651916cd43dd8448eb211c80319c", span_id="b7ad6b7169203331", scope="llm_call", model="m",
)


def build(cls: type[BaseMetric]) -> BaseMetric:
    return cls(options=SAMPLE_OPTIONS.get(cls.kind, {}))


def ids(cls: type[BaseMetric]) -> str:
    return cls.kind


def test_every_builtin_kind_is_registered() -> None:
    assert {cls.kind for cls in METRICS} >= set(BUILTIN_METRICS)
    for kind in BUILTIN_METRICS:
        assert next(cls for cls in METRICS if cls.kind == kind)


@pytest.mark.parametrize("cls", METRICS, ids=ids)
def test_declares_its_class_variables(cls: type[BaseMetric]) -> None:
    assert cls.kind and cls.kind.isidentifier() and cls.kind == cls.kind.lower()
    assert cls.family and cls.family.isidentifier()
    assert isinstance(cls.dimension, Dimension)
    assert 0.0 <= cls.default_threshold <= 1.0
    assert isinstance(cls.version, str) and cls.version
    assert isinstance(cls.requires, tuple)
    fields = set(EvalCase.__dataclass_fields__)
    assert set(cls.requires) <= fields, f"requires names unknown EvalCase fields: {set(cls.requires) - fields}"
    assert issubclass(cls.Options, ComponentConfig)
    assert cls.__name__.endswith("Metric")


@pytest.mark.parametrize("cls", METRICS, ids=ids)
def test_has_a_docstring_with_a_one_line_summary(cls: type[BaseMetric]) -> None:
    doc = inspect.cleandoc(cls.__doc__ or "")
    lines = doc.splitlines()
    assert lines and lines[0].strip(), f"{cls.__name__} needs a docstring"
    assert len(lines) == 1 or not lines[1].strip(), "the summary must be one line followed by a blank line"
    assert cls.describe()["summary"] == lines[0]


@pytest.mark.parametrize("cls", METRICS, ids=ids)
def test_every_option_is_described(cls: type[BaseMetric]) -> None:
    undocumented = [name for name, field in cls.Options.model_fields.items() if not field.description]
    assert not undocumented, f"{cls.kind}: options without a description: {undocumented}"


@pytest.mark.parametrize("cls", [c for c in METRICS if c.__module__.startswith("evald.")], ids=ids)
def test_lives_in_its_own_file_under_its_family(cls: type[BaseMetric]) -> None:
    path = Path(inspect.getfile(cls)).resolve()
    assert path == PACKAGE / "metrics" / cls.family / f"{cls.kind}.py"
    module = importlib.import_module(cls.__module__)
    defined = [
        obj for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, BaseMetric) and obj.__module__ == module.__name__
    ]
    assert defined == [cls], f"{module.__name__} must define exactly one BaseMetric subclass, found {defined}"


@pytest.mark.parametrize("cls", METRICS, ids=ids)
def test_default_options_or_a_sample_build_the_metric(cls: type[BaseMetric]) -> None:
    metric = build(cls)
    assert metric.name == cls.kind and metric.threshold == cls.default_threshold


@pytest.mark.parametrize("cls", METRICS, ids=ids)
@pytest.mark.parametrize("case", [EvalCase(), FULL_CASE], ids=["empty", "full"])
def test_measure_returns_none_or_a_score_in_range(cls: type[BaseMetric], case: EvalCase) -> None:
    metric = build(cls)
    try:
        score = asyncio.run(metric.a_measure(case))
    except MetricUnavailable as err:  # a metric that leaves the process, its service absent here: an error outcome
        assert cls.is_async and str(err)
        return
    if score is None:
        return
    assert isinstance(score, Score)
    assert 0.0 <= score.value <= 1.0
    assert score.name == metric.name and score.threshold == metric.threshold
    assert score.dimension is cls.dimension
    assert score.passed is (score.value >= score.threshold)
