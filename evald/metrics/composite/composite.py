"""``composite``: a weighted mean of other metrics' scores of the same case."""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import Field, model_validator

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.multi_case import CompositeMetric, CompositeOptions


class CompositeScoreOptions(CompositeOptions):
    weights: dict[str, float] = Field(description="metric name -> weight (>= 0) of the metrics combined (required)")

    @model_validator(mode="after")
    def _usable(self) -> Self:
        if not self.weights:
            raise ValueError("`weights` needs at least one metric")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError("weights must be >= 0 with a positive sum")
        return self


class CompositeScoreMetric(CompositeMetric):
    """A weighted mean of other metrics' scores of the same case, with declared weights.

    ``weights`` maps metric names (their ``name`` in ``metrics:``, by default the kind) to weights. The value is
    sum(w_i * score_i) / sum(w_i) over the weighted metrics that scored the case: a metric that was not
    applicable, skipped or errored is left out and the weights are renormalised (harness-evals'
    ``remediation_quality_index`` rule); with fewer than ``min_present`` of them scored there is no value. The
    composite is planned after the metrics it weights, like a ``when:`` condition: the windowed stage waits for
    their results on the case (the judged ones too) and exports the composite as its own score of the case.
    Example: weights {faithfulness: 2, answer_relevancy: 1}, scores 0.9 and 0.6: (1.8 + 0.6) / 3 = 0.8.
    Metadata: ``matched_metrics``, ``weights``, ``components``.

    Not applicable when fewer than ``min_present`` (default 1) weighted metrics scored the case.
    """

    kind: ClassVar[str] = "composite"
    family: ClassVar[str] = "composite"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = CompositeScoreOptions
