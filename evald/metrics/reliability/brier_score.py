"""``brier_score``: 1 minus the mean squared error of confidence against outcome, over a sliding window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from evald.case import Dimension, Score
from evald.metrics.multi_case import WindowMetric


class BrierScoreMetric(WindowMetric):
    """``1 - (1/T) * sum((c_i - y_i)^2)`` over a window of (confidence, outcome) pairs (P_brier, Rabanser et al.).

    harness-evals' BrierScore: a proper scoring rule that rewards calibration and discrimination jointly; 1 for a
    predictor that gives 1 to every success and 0 to every failure, 0.75 for constant 0.5. The pairs come from a
    sliding window per (metric, service_name, model) of cases with a ``confidence`` (``confidence_from``) and an
    outcome (``outcome_metric``'s pass/fail, else the golden match); see docs/multi-case-metrics.md.
    Example: (0.9, pass), (0.2, fail), (0.6, fail): MSE (0.01 + 0.04 + 0.36) / 3 = 0.1367: value 0.8633.
    Exported as the gauge ``evald_window_score{metric,service_name,model}``; in ``evald replay`` as a run-level
    result. Metadata: ``mse``, ``n_cases``.

    No value while the window holds fewer than ``min_cases`` cases (default 20; harness-evals needs 2).
    """

    kind: ClassVar[str] = "brier_score"
    family: ClassVar[str] = "reliability"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("confidence", "output", "expected")
    needs: ClassVar[tuple[str, ...]] = ()

    def measure_pairs(self, pairs: Sequence[tuple[float, bool]]) -> Score | None:
        if len(pairs) < 2:
            return None
        mse = sum((c - (1.0 if y else 0.0)) ** 2 for c, y in pairs) / len(pairs)
        return self.score(max(0.0, 1.0 - mse), f"Brier {1.0 - mse:.4f} (MSE {mse:.4f}) over {len(pairs)} cases",
                          mse=mse, n_cases=len(pairs))
