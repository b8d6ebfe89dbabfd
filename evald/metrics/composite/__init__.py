"""Composite metrics: weighted combinations of other metrics' scores of the same case, computed by the windowed
stage (evald/windowed/) once the metrics they weight have run.
"""

METRICS: dict[str, str] = {
    "composite": "evald.metrics.composite.composite:CompositeScoreMetric",
    "remediation_quality_index": "evald.metrics.composite.remediation_quality_index:RemediationQualityIndexMetric",
}
