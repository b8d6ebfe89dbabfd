"""The contract of metrics scored over more than one case: groups of runs, sliding windows, composites.

Three bases, each a ``BaseMetric`` (so ``evald list-metrics``, config validation and docs treat them like any other
kind) whose per-case ``measure()`` is never called by the scorer: the pipeline hands their bindings to the windowed
stage (evald/windowed/), which keeps their state and bounds and calls the method below when there is enough data.

- ``GroupMetric.measure_group(runs)``: K runs of one probe (grouped by a key: a run-group attribute, the golden a
  case matched, or its normalised input); the score is attached to the latest run's case.
- ``WindowMetric.measure_pairs(pairs)``: (confidence, outcome) pairs of a sliding window per (metric, service_name,
  model); exported as gauges (and run-level results in ``evald replay``).
- ``CompositeMetric.combine(scores)``: other metrics' scores of the same case, by name; planned after them.

A run's ``outcome`` (passed or not), where a metric needs one, is another metric's pass/fail on the same case
(``outcome_metric``), else the golden match: the case's output equals its ``expected`` after normalisation (case-folded,
whitespace collapsed, trailing ``.!?`` dropped); a case with neither has no outcome and is left out (counted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from evald.case import EvalCase, Score
from evald.config.base import ComponentConfig, Duration
from evald.metrics.base import BaseMetric
from evald.metrics.text import as_text

#: the windowed stage's case attributes (span, root span or resource attributes it was asked to read)
WINDOW_ATTRIBUTES = "window_attributes"


@dataclass(frozen=True, slots=True)
class Run:
    """One case as a multi-case metric sees it: the case (as a group holds it: without input, expected, context,
    messages and tool arguments), the scores it received (by metric name; a group keeps none), its outcome."""

    case: EvalCase
    scores: Mapping[str, Score] = field(default_factory=dict)
    outcome: bool | None = None


def golden_outcome(case: EvalCase) -> bool | None:
    """Whether the output matches the expected answer (normalised text; a list of answers: any); None without one."""
    if case.expected is None or case.output is None:
        return None
    answers = case.expected if isinstance(case.expected, (list, tuple)) else [case.expected]
    output = _norm(as_text(case.output))
    return any(_norm(as_text(a)) == output for a in answers if a is not None)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!? ")


def attribute(case: EvalCase, name: str) -> object | None:
    """The value of span/resource attribute ``name`` the windowed stage copied onto the case (None: absent)."""
    attrs = case.metadata.get(WINDOW_ATTRIBUTES)
    return attrs.get(name) if isinstance(attrs, Mapping) else None


class OutcomeOptions(ComponentConfig):
    outcome_metric: str | None = Field(
        None, description="name of another metric of the same case whose pass/fail is the run's outcome; unset: the "
        "golden match (output equals expected)",
    )


class GroupOptions(OutcomeOptions):
    group_by: Literal["attribute", "golden", "input"] = Field(
        "attribute", description="attribute: the value of `group_attribute`; golden: the golden the case matched; "
        "input: the case's normalised input",
    )
    group_attribute: str = Field("evald.run_group", min_length=1, description="span/resource attribute of the group")
    k: int = Field(5, ge=2, le=1000, description="runs per group: the group is scored when it has k runs")
    max_age: Duration = Field(3600.0, description="a group not complete this long after its first run is dropped")
    max_groups: int = Field(1000, gt=0, le=100_000, description="open groups held; beyond, the oldest is dropped "
                            "(counted)")


class GroupMetric(BaseMetric):
    """A metric over the K runs of one group (consistency, robustness)."""

    multi_case: ClassVar[str] = "group"
    #: whether ``measure_group`` reads ``Run.outcome`` (then runs without one are left out, counted)
    uses_outcome: ClassVar[bool] = False
    Options: ClassVar[type[ComponentConfig]] = GroupOptions

    #: True when the class implements ``a_measure_group`` (e.g. a judge comparing the runs): the windowed stage
    #: awaits it in a task of its own, under the metric timeout (set automatically)
    group_is_async: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.group_is_async = cls.a_measure_group is not GroupMetric.a_measure_group

    def measure(self, eval_case: EvalCase) -> Score | None:
        return None  # scored over a group by the windowed stage, never per case

    def measure_group(self, runs: Sequence[Run]) -> Score | None:
        raise NotImplementedError

    async def a_measure_group(self, runs: Sequence[Run]) -> Score | None:
        """Score a group asynchronously; the default runs ``measure_group()``."""
        return self.measure_group(runs)


class WindowOptions(OutcomeOptions):
    confidence_from: Literal["case", "attribute", "metric"] = Field(
        "attribute", description="case: EvalCase.confidence; attribute: `confidence_attribute`; metric: the score "
        "of `confidence_metric` (e.g. a judge's)",
    )
    confidence_attribute: str = Field("evald.confidence", min_length=1, description="attribute holding [0, 1]")
    confidence_metric: str | None = Field(None, description="confidence_from metric: the metric whose score is used")
    window: int = Field(500, ge=2, le=100_000, description="cases kept per (service_name, model) window")
    max_age: Duration = Field(3600.0, description="cases older than this leave the window")
    min_cases: int = Field(20, ge=2, description="fewer cases in a window: no value")
    max_windows: int = Field(100, gt=0, description="(service_name, model) windows; beyond, cases share one `other`")

    @model_validator(mode="after")
    def _metric_named(self) -> Self:
        if self.confidence_from == "metric" and not self.confidence_metric:
            raise ValueError("confidence_from `metric` needs `confidence_metric`")
        return self


class WindowMetric(BaseMetric):
    """A metric over the (confidence, outcome) pairs of a sliding window (calibration, discrimination, Brier)."""

    multi_case: ClassVar[str] = "window"
    Options: ClassVar[type[ComponentConfig]] = WindowOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        return None  # scored over a window by the windowed stage, never per case

    def measure_pairs(self, pairs: Sequence[tuple[float, bool]]) -> Score | None:
        raise NotImplementedError


class CompositeOptions(ComponentConfig):
    weights: dict[str, float] = Field(
        default_factory=dict, description="metric name -> weight (>= 0) of the metrics combined"
    )
    min_present: int = Field(1, ge=1, description="fewer of the weighted metrics scored on the case: no value")


class CompositeMetric(BaseMetric):
    """A weighted combination of other metrics' scores of the same case."""

    multi_case: ClassVar[str] = "composite"
    Options: ClassVar[type[ComponentConfig]] = CompositeOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        return None  # combined by the windowed stage once the metrics it weights have run

    def weights(self) -> dict[str, float]:
        opts = self.options
        assert isinstance(opts, CompositeOptions)
        return dict(opts.weights)

    def combine(self, scores: Mapping[str, Score]) -> Score | None:
        """Weighted mean of the weighted metrics that scored the case, weights renormalised over those present."""
        opts = self.options
        assert isinstance(opts, CompositeOptions)
        weights = self.weights()
        present = {n: w for n, w in weights.items() if n in scores}
        total = sum(present.values())
        if len(present) < opts.min_present or total <= 0:
            return None
        value = sum(scores[n].value * w for n, w in present.items()) / total
        missing = sorted(set(weights) - set(present))
        reason = f"weighted mean of {len(present)} of {len(weights)} metrics"
        if missing:
            reason += f" (not scored: {', '.join(missing)})"
        return self.score(value, reason, matched_metrics=sorted(present), weights=weights,
                          components={n: scores[n].value for n in present})


def is_multi_case(metric: BaseMetric) -> bool:
    return isinstance(metric, (GroupMetric, WindowMetric, CompositeMetric))
