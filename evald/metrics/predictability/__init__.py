"""Predictability metrics over confidence scores: expected calibration error and AUC-ROC, computed over a sliding
window per (metric, service_name, model) by the windowed stage (evald/windowed/), not per case.
"""

METRICS: dict[str, str] = {
    "calibration": "evald.metrics.predictability.calibration:CalibrationMetric",
    "discrimination": "evald.metrics.predictability.discrimination:DiscriminationMetric",
}
