"""``calibration``: 1 minus the expected calibration error (ECE) of confidence over a sliding window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, Score
from evald.config.base import ComponentConfig
from evald.metrics.multi_case import WindowMetric, WindowOptions


class CalibrationOptions(WindowOptions):
    n_bins: int = Field(10, ge=1, le=100, description="equal-width confidence bins")


class CalibrationMetric(WindowMetric):
    """``1 - ECE``: how closely confidence matches the observed success rate, over a window of cases.

    harness-evals' Calibration: the pairs are split into ``n_bins`` equal-width confidence bins ([i/n, (i+1)/n),
    the last bin closed at 1); ECE = sum over non-empty bins of (bin size / T) * |success rate - mean confidence|.
    Example (10 bins): (0.95, pass), (0.95, fail), (0.15, fail), (0.15, fail): bin 0.9: |0.5 - 0.95| = 0.45, bin
    0.1: |0 - 0.15| = 0.15; ECE (2 * 0.45 + 2 * 0.15) / 4 = 0.3: value 0.7. Pairs come from a sliding window per
    (metric, service_name, model) of cases with a ``confidence`` and an outcome (see ``brier_score``); exported
    as the gauge ``evald_window_score`` and, in ``evald replay``, as a run-level result. Metadata: ``ece``,
    ``n_cases``, ``n_bins``.

    No value while the window holds fewer than ``min_cases`` cases (default 20).
    """

    kind: ClassVar[str] = "calibration"
    family: ClassVar[str] = "predictability"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("confidence", "output", "expected")
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = CalibrationOptions

    def measure_pairs(self, pairs: Sequence[tuple[float, bool]]) -> Score | None:
        if len(pairs) < 2:
            return None
        n_bins = cast(CalibrationOptions, self.options).n_bins
        width = 1.0 / n_bins
        ece = 0.0
        for i in range(n_bins):
            lo, hi = i * width, (i + 1) * width
            in_bin = [(c, y) for c, y in pairs if lo <= c < hi or (i == n_bins - 1 and c == hi)]
            if in_bin:
                confidence = sum(c for c, _ in in_bin) / len(in_bin)
                accuracy = sum(1 for _, y in in_bin if y) / len(in_bin)
                ece += len(in_bin) / len(pairs) * abs(accuracy - confidence)
        return self.score(max(0.0, 1.0 - ece), f"ECE {ece:.4f} over {len(pairs)} cases, {n_bins} bins",
                          ece=ece, n_cases=len(pairs), n_bins=n_bins)
