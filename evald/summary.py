"""Aggregate scored cases into a per-metric summary (replay's table and its ``--fail-under`` gate).

Safety metrics are reported in their own section and never averaged with the other dimensions. The gate's
"mean pass rate" is the mean of the per-metric pass rates of the non-safety metrics; every safety metric must
also reach the same pass rate on its own.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from evald.case import Dimension
from evald.model import ScoredCase


@dataclass
class MetricSummary:
    name: str
    dimension: str
    values: list[float] = field(default_factory=list)
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0

    @property
    def count(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.count if self.count else None

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    def quantile(self, q: float) -> float | None:
        if not self.values:
            return None
        ordered = sorted(self.values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "dimension": self.dimension, "count": self.count, "passed": self.passed,
            "failed": self.failed, "skipped": self.skipped, "errors": self.errors, "mean": self.mean,
            "pass_rate": self.pass_rate, "p50": self.quantile(0.5), "p90": self.quantile(0.9),
        }


@dataclass
class Summary:
    metrics: dict[str, MetricSummary]
    cases: int
    #: "skip": a metric that did not apply (or failed) on a case is left out of its mean and pass rate;
    #: "zero": it counts as a 0 score that failed (Harbor's default for missing rewards).
    missing: str = "skip"
    #: named values from a custom aggregation script (``evald replay --aggregate``), when one ran
    custom: dict[str, object] | None = None
    #: skip reason -> metric -> count (``missing_output``, ``not_applicable``, ``sampled_out``...)
    skipped_by_reason: dict[str, dict[str, int]] = field(default_factory=dict)
    #: traces that gave no trace case, by reason (set by the replay, which sees the mapping)
    not_evaluable: dict[str, int] = field(default_factory=dict)
    #: instrumentation -> content-capture status (full / partial / masked / none) -> cases
    content_capture: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def quality(self) -> list[MetricSummary]:
        return [m for m in self.metrics.values() if m.dimension != Dimension.SAFETY.value]

    @property
    def safety(self) -> list[MetricSummary]:
        return [m for m in self.metrics.values() if m.dimension == Dimension.SAFETY.value]

    @property
    def mean_pass_rate(self) -> float | None:
        rates = [r for m in self.quality if (r := m.pass_rate) is not None]
        return statistics.fmean(rates) if rates else None

    def gate_failures(self, fail_under: float) -> list[str]:
        out = []
        mean = self.mean_pass_rate
        if mean is not None and mean < fail_under:
            out.append(f"mean pass rate {mean:.3f} is below {fail_under:g}")
        for m in self.safety:
            if m.pass_rate is not None and m.pass_rate < fail_under:
                out.append(f"safety metric {m.name} pass rate {m.pass_rate:.3f} is below {fail_under:g}")
        if mean is None and not any(m.pass_rate is not None for m in self.safety):
            out.append("no scores were produced")
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "cases": self.cases,
            "missing": self.missing,
            "mean_pass_rate": self.mean_pass_rate,
            "custom": self.custom,
            "metrics": [m.to_dict() for m in self.quality],
            "safety": [m.to_dict() for m in self.safety],
            "skipped_by_reason": self.skipped_by_reason,
            "not_evaluable": self.not_evaluable,
            "content_capture": self.content_capture,
        }


def summarize(scored: Iterable[ScoredCase], missing: str = "skip") -> Summary:
    if missing not in ("skip", "zero"):
        raise ValueError(f"missing must be 'skip' or 'zero', not {missing!r}")
    metrics: dict[str, MetricSummary] = {}
    cases = 0

    def entry(name: str, dimension: str) -> MetricSummary:  # the first outcome of ``name``: callers look it up
        m = metrics[name] = MetricSummary(name, dimension)
        return m

    def absent(name: str, sc: ScoredCase) -> MetricSummary:
        """A metric with no score on ``sc`` (skipped or errored); with ``missing="zero"`` a failed 0."""
        m = metrics.get(name)
        if m is None:
            m = entry(name, sc.metric_dimensions.get(name, "unknown"))
        if zero:
            m.values.append(0.0)
            m.failed += 1
        return m

    zero = missing == "zero"
    reasons: dict[str, dict[str, int]] = {}
    capture: dict[str, dict[str, int]] = {}
    for sc in scored:
        cases += 1
        status = sc.case.metadata.get("content_capture")
        if isinstance(status, str):
            by_status = capture.setdefault(str(sc.case.metadata.get("instrumentation", "other")), {})
            by_status[status] = by_status.get(status, 0) + 1
        for score in sc.scores:
            m = metrics.get(score.name)  # read first: an enum's .value is a Python-level property
            if m is None:
                m = entry(score.name, score.dimension.value)
            m.values.append(score.value)
            if score.passed:
                m.passed += 1
            else:
                m.failed += 1
        for name, reason in sc.skipped:
            per_metric = reasons.setdefault(reason, {})
            per_metric[name] = per_metric.get(name, 0) + 1
            absent(name, sc).skipped += 1
        for name, _ in sc.errors:
            absent(name, sc).errors += 1
    return Summary(metrics=metrics, cases=cases, missing=missing, skipped_by_reason=reasons, content_capture=capture)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_summary(summary: Summary) -> str:
    header = ("metric", "dimension", "count", "pass", "fail", "skipped", "errors", "mean", "pass_rate", "p50", "p90")

    def rows(items: list[MetricSummary]) -> list[tuple[str, ...]]:
        return [
            (m.name, m.dimension, str(m.count), str(m.passed), str(m.failed), str(m.skipped), str(m.errors),
             _fmt(m.mean), _fmt(m.pass_rate), _fmt(m.quantile(0.5)), _fmt(m.quantile(0.9)))
            for m in sorted(items, key=lambda m: m.name)
        ]

    def table(title: str, body: list[tuple[str, ...]]) -> list[str]:
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
        return lines

    out = [f"cases evaluated: {summary.cases}"]
    out += table("quality metrics:", rows(summary.quality)) if summary.quality else ["quality metrics: none"]
    if summary.safety:
        out += table("safety metrics (reported separately, never averaged):", rows(summary.safety))
    out.append(f"mean pass rate (quality metrics): {_fmt(summary.mean_pass_rate)}"
               + (" (missing scores count as 0)" if summary.missing == "zero" else ""))
    if summary.custom is not None:
        out.append("custom aggregation: " + ", ".join(f"{k}={v}" for k, v in summary.custom.items()))
    out += _explanations(summary)
    return "\n".join(out)


def _explanations(summary: Summary) -> list[str]:
    """Why scores are missing: skips by reason, traces not evaluated, and whether content was recorded."""
    from evald.mapping.instrumentations import by_id

    out: list[str] = []
    if summary.skipped_by_reason:
        out.append("skipped by reason:")
        for reason, per_metric in sorted(summary.skipped_by_reason.items(), key=lambda kv: -sum(kv[1].values())):
            metrics = ", ".join(f"{m} {n}" for m, n in sorted(per_metric.items()))
            out.append(f"  {reason}: {sum(per_metric.values())} ({metrics})")
    if summary.not_evaluable:
        out.append("traces not evaluated: " + ", ".join(f"{r} {n}" for r, n in summary.not_evaluable.items()))
    if summary.content_capture:
        out.append("content capture (cases by instrumentation):")
        for instrumentation, by_status in sorted(summary.content_capture.items()):
            counts = ", ".join(f"{status} {n}" for status, n in sorted(by_status.items()))
            out.append(f"  {instrumentation}: {counts}")
            if by_status.get("none") or by_status.get("masked"):
                library = by_id(instrumentation)
                out.append(f"    content not recorded or masked: metrics that need it skip; to score content set "
                           f"{library.switch} (docs/capturing-content.md)")
    return out
