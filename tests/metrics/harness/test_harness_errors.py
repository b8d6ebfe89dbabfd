"""The adapter's failure modes: missing package, unknown or unsupported classes, bad scores, async-only metrics."""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

import harness_evals.plugins
import pytest
from harness_evals.core.eval_case import EvalCase as HarnessCase
from harness_evals.core.metric import BaseMetric as HarnessBaseMetric
from harness_evals.core.metric import Dimension as HarnessDimension
from harness_evals.core.score import Score as HarnessScore

from evald.case import Dimension, EvalCase
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.metrics.harness_adapter import (
    HarnessEvalsMissingError,
    HarnessScoreError,
    UnsupportedHarnessMetricError,
)
from evald.metrics.registry import get_metric_class


def config_problems(*kinds: str) -> list[tuple[str, str]]:
    metrics = "\n".join(f'  - {{ kind: "{kind}" }}' for kind in kinds)
    with pytest.raises(ConfigError) as err:
        parse_config(f"metrics:\n{metrics}\n", "test", environ={})
    return err.value.problems


class ScriptedMetric(HarnessBaseMetric):
    """A harness metric returning whatever ``result`` says (plugin metrics are adapted like built-ins)."""

    result: Any = None

    def __init__(self, threshold: float = 0.5, **kwargs: object) -> None:
        super().__init__(name="scripted", dimension=HarnessDimension.PERFORMANCE, threshold=threshold, **kwargs)

    def measure(self, eval_case: HarnessCase) -> Any:
        return type(self).result


class AsyncOnlyMetric(HarnessBaseMetric):
    """A harness metric whose real work is in a_measure (its measure would need its own event loop)."""

    def __init__(self, pattern: str, threshold: float = 1.0, **kwargs: object) -> None:
        super().__init__(name="async_only", dimension=HarnessDimension.CORRECTNESS, threshold=threshold, **kwargs)
        self.pattern = pattern

    def measure(self, eval_case: HarnessCase) -> HarnessScore:
        raise RuntimeError("the sync path must not be used")

    async def a_measure(self, eval_case: HarnessCase) -> HarnessScore:
        await asyncio.sleep(0)
        found = self.pattern in str(eval_case.output)
        return HarnessScore(name=self.name, value=float(found), threshold=self.threshold, reason="looked")


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(harness_evals.plugins._METRICS, "evald_test_scripted", ScriptedMetric)
    monkeypatch.setitem(harness_evals.plugins._METRICS, "evald_test_async_only", AsyncOnlyMetric)


def scripted(result: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(ScriptedMetric, "result", result)
    return get_metric_class("harness:ScriptedMetric")().measure(EvalCase(output="x"))


def test_a_missing_package_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "harness_evals", None)  # what `import harness_evals` sees when it is absent
    with pytest.raises(HarnessEvalsMissingError, match=r"harness-evals: pip install 'evald\[harness\]'"):
        get_metric_class("harness:ExactMatchMetric")
    [(path, message)] = config_problems("harness:ExactMatchMetric")
    assert path == "metrics[0].kind" and "optional package harness-evals" in message


def test_a_broken_install_says_what_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = importlib.import_module

    def import_module(name: str, package: str | None = None) -> Any:
        if name.startswith("harness_evals"):
            raise ModuleNotFoundError("No module named 'deepdiff'", name="deepdiff")  # a dependency is missing
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", import_module)
    with pytest.raises(HarnessEvalsMissingError, match="harness-evals is installed but cannot be imported: .*deepdiff"):
        get_metric_class("harness:ExactMatchMetric")


def test_an_unknown_class_lists_close_matches() -> None:
    with pytest.raises(UnsupportedHarnessMetricError, match=r"did you mean 'harness:ExactMatchMetric'"):
        get_metric_class("harness:ExactMatchMetrc")
    [(path, message)] = config_problems("harness:exact_match")  # harness' own kind name points to the class
    assert path == "metrics[0].kind"
    assert message.startswith("unknown harness-evals metric class 'exact_match'; did you mean 'harness:ExactMatch")


@pytest.mark.parametrize(("kind", "reason"), [
    ("harness:FaithfulnessMetric", "needs a BaseLLM object (llm=...)"),
    ("harness:EmbeddingSimilarityMetric", "needs a BaseEmbedding object (embedding=...)"),
    ("harness:OutcomeConsistencyMetric", "scores K repeated runs"),
    ("harness:CalibrationMetric", "scores a whole dataset"),
])
def test_classes_that_cannot_run_per_case_from_config_are_config_errors(kind: str, reason: str) -> None:
    [(path, message)] = config_problems(kind)
    assert path == "metrics[0].kind" and reason in message


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config('metrics:\n  - { kind: "harness:ToolCorrectnessMetric", options: { mode: fuzzy } }\n',
                     "test", environ={})
    [(path, message)] = err.value.problems
    assert path == "metrics[0].options"
    assert "ToolCorrectnessMetric rejects these options: mode must be 'exact', 'subset', or 'subsequence'" in message


def test_a_valid_config_builds() -> None:
    config = parse_config(
        'metrics:\n  - { kind: "harness:ExactMatchMetric", threshold: 1, options: { case_sensitive: false } }\n'
        '  - { kind: "harness:SchemaValidationMetric", name: is_object, options: { schema: { type: object } } }\n',
        "test", environ={},
    )
    assert [m.kind for m in config.metrics] == ["harness:ExactMatchMetric", "harness:SchemaValidationMetric"]


@pytest.mark.usefixtures("plugins")
def test_none_is_not_applicable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scripted(None, monkeypatch) is None


@pytest.mark.usefixtures("plugins")
def test_a_plugin_metric_keeps_its_value_dimension_and_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = get_metric_class("harness:ScriptedMetric")
    assert (cls.dimension, cls.default_threshold) == (Dimension.PERFORMANCE, 0.5)
    score = scripted(HarnessScore(name="scripted", value=0.25, threshold=0.5, metadata={"reason": "kept"}),
                     monkeypatch)
    assert score.value == 0.25 and not score.passed and score.metadata == {"reason": "kept"}


@pytest.mark.usefixtures("plugins")
def test_a_value_outside_0_1_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = HarnessScore(name="scripted", value=1.0, threshold=0.5)
    bad.value = 1.5  # harness' Score refuses it when built, but it is a mutable dataclass
    with pytest.raises(HarnessScoreError, match=r"value 1.5, outside \[0, 1\]"):
        scripted(bad, monkeypatch)
    nan = HarnessScore(name="scripted", value=0.0, threshold=0.5)
    nan.value = float("nan")
    with pytest.raises(HarnessScoreError):
        scripted(nan, monkeypatch)


@pytest.mark.usefixtures("plugins")
def test_a_tiny_overshoot_is_clamped(monkeypatch: pytest.MonkeyPatch) -> None:
    score = HarnessScore(name="scripted", value=1.0, threshold=0.5)
    score.value = 1.0000001
    assert scripted(score, monkeypatch).value == 1.0


@pytest.mark.usefixtures("plugins")
def test_something_that_is_not_a_harness_score_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HarnessScoreError, match="returned float, not a harness-evals Score"):
        scripted(0.5, monkeypatch)


@pytest.mark.usefixtures("plugins")
def test_an_async_harness_metric_is_adapted_with_a_measure() -> None:
    cls = get_metric_class("harness:AsyncOnlyMetric")
    assert cls.is_async
    metric = cls(options={"pattern": "Paris"})
    score = asyncio.run(metric.a_measure(EvalCase(output="Paris, France")))
    assert score is not None and score.value == 1.0 and score.reason == "looked"
    score = asyncio.run(metric.a_measure(EvalCase(output="Lyon")))
    assert score is not None and score.value == 0.0
    with pytest.raises(NotImplementedError):  # evald never calls measure() on an async metric
        metric.measure(EvalCase(output="Paris"))
