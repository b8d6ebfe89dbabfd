"""``remediation_quality_index``: the weighted composite of the seven security remediation metrics."""

from __future__ import annotations

from typing import ClassVar, Final

from pydantic import Field

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.multi_case import CompositeMetric, CompositeOptions

#: harness-evals' REMEDIATION_WEIGHTS (harness_evals/metrics/security/composite.py), keyed by evald kind
REMEDIATION_WEIGHTS: Final[dict[str, float]] = {
    "vulnerability_correctness": 0.25,
    "security_completeness": 0.20,
    "code_safety": 0.15,
    "code_quality": 0.10,
    "explanation_quality": 0.15,
    "root_cause_analysis": 0.10,
    "actionability": 0.05,
}


class RemediationQualityIndexOptions(CompositeOptions):
    weights: dict[str, float] = Field(
        default_factory=lambda: dict(REMEDIATION_WEIGHTS),
        description="metric name -> weight; default: harness-evals' remediation weights by kind",
    )


class RemediationQualityIndexMetric(CompositeMetric):
    """The Remediation Quality Index: a weighted mean of the security remediation metrics of the same case.

    harness-evals' ``remediation_quality_index``: weights vulnerability_correctness 0.25, security_completeness
    0.20, code_safety 0.15, code_quality 0.10, explanation_quality 0.15, root_cause_analysis 0.10, actionability
    0.05 (option ``weights`` replaces them, e.g. for metrics configured under other names); metrics that did not
    score the case are left out and the weights renormalised over those present. A ``composite`` preset: planned
    after the metrics it weights and exported as its own score of the case. Example: only code_safety 0.4 and
    actionability 1.0 scored: (0.15 * 0.4 + 0.05 * 1.0) / 0.2 = 0.55. Default threshold 0.5 (harness-evals').

    Not applicable when none of the weighted metrics scored the case.
    """

    kind: ClassVar[str] = "remediation_quality_index"
    family: ClassVar[str] = "composite"
    dimension: ClassVar[Dimension] = Dimension.SAFETY
    default_threshold: ClassVar[float] = 0.5
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = RemediationQualityIndexOptions
