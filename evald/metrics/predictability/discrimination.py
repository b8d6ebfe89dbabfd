"""``discrimination``: AUC-ROC of confidence as a predictor of success, over a sliding window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from evald.case import Dimension, Score
from evald.metrics.multi_case import WindowMetric


class DiscriminationMetric(WindowMetric):
    """AUC-ROC of (confidence, outcome) pairs: whether confidence separates successes from failures.

    harness-evals' Discrimination: the ROC curve is swept from high to low confidence one block of tied
    confidences at a time (ties contribute a diagonal segment), and the area is summed by the trapezoidal rule: 1
    when every success has a higher confidence than every failure, 0.5 for no separation (or all confidences
    equal), 0 for the inverse. Equivalent to P(conf(success) > conf(failure)) + 0.5 P(tie). Example: successes at
    0.9 and 0.6, failures at 0.7 and 0.2: 3 of 4 pairs ordered: 0.75. Pairs come from a sliding window per (metric,
    service_name, model) (see ``brier_score``); exported as the gauge ``evald_window_score`` and, in ``evald
    replay``, as a run-level result. Metadata: ``auc_roc``, ``n_positive``, ``n_negative``.

    No value while the window holds fewer than ``min_cases`` cases or only one outcome (harness-evals scores 0).
    """

    kind: ClassVar[str] = "discrimination"
    family: ClassVar[str] = "predictability"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("confidence", "output", "expected")
    needs: ClassVar[tuple[str, ...]] = ()

    def measure_pairs(self, pairs: Sequence[tuple[float, bool]]) -> Score | None:
        positives = sum(1 for _, y in pairs if y)
        negatives = len(pairs) - positives
        if positives == 0 or negatives == 0:
            return None
        ordered = sorted(pairs, key=lambda p: p[0], reverse=True)
        auc = tp = fp = 0.0
        prev_tpr = prev_fpr = 0.0
        i = 0
        while i < len(ordered):
            conf = ordered[i][0]
            while i < len(ordered) and ordered[i][0] == conf:
                if ordered[i][1]:
                    tp += 1
                else:
                    fp += 1
                i += 1
            tpr, fpr = tp / positives, fp / negatives
            auc += (fpr - prev_fpr) * (tpr + prev_tpr) / 2
            prev_tpr, prev_fpr = tpr, fpr
        value = max(0.0, min(1.0, auc))
        reason = f"AUC-ROC {value:.4f} over {len(pairs)} cases ({positives} passed, {negatives} failed)"
        return self.score(value, reason, auc_roc=value, n_cases=len(pairs), n_positive=positives, n_negative=negatives)
