"""``environment_robustness``: accuracy under environment perturbations relative to nominal runs."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.metrics.reliability.robustness_base import RobustnessMetric


class EnvironmentRobustnessMetric(RobustnessMetric):
    """Accuracy under environment perturbations relative to nominal runs: ``min(Acc_perturbed / Acc_nominal, 1)``.

    Perturbations: reordered JSON fields, changed date formats or naming, wrapped responses, renamed tool
    parameters (R_env).

    harness-evals' EnvironmentRobustnessMetric: the formula, grouping and outcomes of ``RobustnessMetric``
    (evald/metrics/reliability/robustness_base.py): K runs of one group (default ``evald.run_group``), split into
    nominal and perturbed runs by ``evald.variant`` (``nominal`` or absent: nominal), each run passing by
    ``outcome_metric`` or the golden match. A group whose nominal runs all failed scores 1.

    Not applicable when the group lacks a nominal or a perturbed run with an outcome.
    """

    kind: ClassVar[str] = "environment_robustness"
    family: ClassVar[str] = "reliability"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.8
