"""Render evald's Grafana dashboard (``python deploy/grafana/render_dashboard.py``).

Writes deploy/grafana/dashboards/evald.json (provisioned by the Compose stack) and the identical copy the Helm chart
ships in a ConfigMap labelled ``grafana_dashboard`` (helm/evald/dashboards/evald.json). Every query uses series evald
exposes (tests/deploy/test_dashboard.py checks them against a live scrape).

Pass-rate and outcome panels carry data links into evald's evaluation explorer (docs/explorer.md), filtered by the
series' metric and service and the dashboard's time range; its base URL is the textbox variable ``explorer_url``
(default ``EXPLORER_DEFAULT``, the Compose stack's admin port; the chart sets ``explorer.externalUrl``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TARGETS = (ROOT / "deploy/grafana/dashboards/evald.json", ROOT / "helm/evald/dashboards/evald.json")
DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'service_name=~"$service", metric=~"$metric"'
EXPLORER_DEFAULT = "http://localhost:9464"
_RANGE = "since=${__from:date:iso}&until=${__to:date:iso}"


def explorer_links(outcome: str = "fail") -> list[dict[str, Any]]:
    """Data links from a series to the explorer, filtered by its `metric` and `service_name` labels."""
    base = "${explorer_url}/debug/evaluations?metric=${__field.labels.metric}&service=${__field.labels.service_name}"
    label = "Failing" if outcome == "fail" else outcome
    return [
        {"title": f"{label} cases of ${{__field.labels.metric}} in the evald explorer",
         "url": f"{base}&outcome={outcome}&{_RANGE}", "targetBlank": True},
        {"title": "All recent evaluations of ${__field.labels.metric}", "url": f"{base}&{_RANGE}",
         "targetBlank": True},
    ]


def panel(pid: int, title: str, exprs: list[tuple[str, str]], x: int, y: int, *, kind: str = "timeseries",
          unit: str = "short", w: int = 12, h: int = 8, exemplars: bool = False,
          description: str = "", links: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    defaults: dict[str, Any] = {"unit": unit, **({"links": links} if links else {})}
    return {
        "id": pid, "type": kind, "title": title, "description": description, "datasource": DS,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom"}},
        "targets": [{"refId": chr(65 + i), "datasource": DS, "expr": expr, "legendFormat": legend,
                     "exemplar": exemplars} for i, (expr, legend) in enumerate(exprs)],
    }


def dashboard() -> dict[str, Any]:
    rate = ("sum by (metric, dimension, service_name) (rate(evald_evaluations_total{%s, outcome=%s}"
            "[$__rate_interval]))")
    by = "sum by (metric, dimension, service_name)"
    panels = [
        panel(1, "Pass rate by metric (quality dimensions)", [(
            f'{by} (increase(evald_evaluations_total{{{SEL}, outcome="pass", '
            f'dimension!="safety"}}[$__range])) / {by} (increase(evald_evaluations_total'
            f'{{{SEL}, outcome=~"pass|fail", dimension!="safety"}}[$__range]))',
            "{{metric}} ({{dimension}}) {{service_name}}")],
            0, 0, unit="percentunit", links=explorer_links(),
            description="Aggregated from the counters; safety is on its own panel. Click a series for its failing "
            "cases in the evald explorer."),
        panel(2, "Safety pass rate (never averaged with quality)", [(
            f'evald_pass_rate_ratio{{{SEL}, dimension="safety"}}', "{{metric}} {{service_name}}")], 12, 0,
            unit="percentunit", links=explorer_links()),
        panel(3, "Score distribution (p50 / p10) — exemplars link to traces", [
            (f'histogram_quantile(0.5, sum by (le, metric) (rate(evald_score_bucket{{{SEL}}}[$__rate_interval])))',
             "p50 {{metric}}"),
            (f'histogram_quantile(0.1, sum by (le, metric) (rate(evald_score_bucket{{{SEL}}}[$__rate_interval])))',
             "p10 {{metric}}")], 0, 8, exemplars=True),
        panel(4, "Evaluations per second by outcome", [
            (rate % (SEL, f'"{outcome}"'), f"{{{{metric}}}} {{{{service_name}}}} {outcome}")
            for outcome in ("pass", "fail", "skipped", "error")], 12, 8, unit="ops", links=explorer_links()),
        panel(5, "Not evaluable (GenAI traces with no inference call)", [(
            "sum by (reason, convention) (rate(evald_cases_not_evaluable_total[$__rate_interval]))",
            "{{convention}}: {{reason}}")], 0, 16, unit="ops"),
        panel(6, "Judge spend (USD per hour, and over the last 24h)", [
            ("sum by (judge) (rate(evald_judge_cost_usd_total[$__rate_interval])) * 3600", "per hour {{judge}}"),
            ("sum by (judge) (increase(evald_judge_cost_usd_total[1d]))", "last 24h {{judge}}")], 12, 16,
            unit="currencyUSD", description="Price table x the tokens the provider billed."),
        panel(7, "Queue and assembly window", [
            ("evald_queue_size", "case queue"), ("evald_queue_capacity", "queue capacity"),
            ("evald_assembly_traces", "traces assembling")], 0, 24),
        panel(8, "Drops and refusals (every reason is counted)", [
            ("sum by (reason) (rate(evald_receiver_refused_spans_total[$__rate_interval]))", "refused: {{reason}}"),
            ("sum by (reason) (rate(evald_assembly_dropped_spans_total[$__rate_interval]))", "dropped: {{reason}}"),
            ("sum by (reason) (rate(evald_cases_dropped_total[$__rate_interval]))", "cases dropped: {{reason}}"),
            ("sum by (exporter, reason) (rate(evald_exporter_dropped_scores_total[$__rate_interval]))",
             "{{exporter}}: {{reason}}")], 12, 24, unit="ops"),
        panel(9, "Throughput in", [
            ("sum by (transport) (rate(evald_receiver_accepted_spans_total[$__rate_interval]))", "spans {{transport}}"),
            ("sum by (scope) (rate(evald_scored_cases_total[$__rate_interval]))", "cases scored {{scope}}")],
            0, 32, unit="ops"),
        panel(10, "Metric latency p99", [(
            "histogram_quantile(0.99, sum by (le, metric) (rate(evald_metric_duration_seconds_bucket"
            "[$__rate_interval])))", "{{metric}}")], 12, 32, unit="s"),
        panel(11, "Judge budget left (USD) by window", [
            ("min by (judge, window) (evald_judge_budget_remaining_usd)", "{{judge}} {{window}}")], 0, 40,
            unit="currencyUSD", description="At 0 the judge makes no calls until the UTC hour/day rolls over: its "
            "metrics are skipped (budget_exhausted)."),
        panel(12, "Judge budget left (tokens) by window", [
            ("min by (judge, window) (evald_judge_budget_remaining_tokens)", "{{judge}} {{window}}")], 12, 40),
        panel(13, "Judge requests by outcome", [
            ("sum by (judge, outcome) (rate(evald_judge_requests_total[$__rate_interval]))", "{{judge}} {{outcome}}")],
            0, 48, unit="ops", description="Sent: ok, rate_limited, server_error, timeout, malformed. Not sent: "
            "budget_exhausted, circuit_open, never_send."),
        panel(14, "Judge verdict cache hit ratio", [(
            'sum by (judge) (rate(evald_judge_cache_requests_total{result="hit"}[$__rate_interval])) / sum by (judge) '
            "(rate(evald_judge_cache_requests_total[$__rate_interval]))", "{{judge}}")], 12, 48, unit="percentunit"),
        panel(15, "Metric skips by reason", [
            ('sum by (metric, reason) (rate(evald_metric_skips_total{metric=~"$metric"}[$__rate_interval]))',
             "{{metric}}: {{reason}}")], 0, 56, unit="ops",
            description="Deliberate skips (budget, circuit, sampling, not applicable): no score, not a failure."),
        panel(16, "Kafka consumer lag per partition (mode kafka-scorer)", [
            ("sum by (topic, partition) (evald_kafka_consumer_lag)", "{{topic}}/{{partition}}")], 12, 56,
            description="Records between the group's committed offset and the end of each partition."),
        panel(17, "Content capture: share of cases without message content", [(
            'sum by (service_name, instrumentation) (increase(evald_content_capture_cases_total{'
            'service_name=~"$service", content=~"none|masked"}[$__range])) / sum by (service_name, instrumentation) '
            '(increase(evald_content_capture_cases_total{service_name=~"$service"}[$__range]))',
            "{{service_name}} ({{instrumentation}})")], 0, 64, kind="bargauge", unit="percentunit",
            description="Cases whose instrumentation did not record (none) or masked (masked) the messages: their "
            "content metrics skip as missing_input / missing_output. evald's log names the switch that turns content "
            "on; see docs/capturing-content.md."),
        panel(18, "Content capture by status", [(
            'sum by (content, instrumentation) (rate(evald_content_capture_cases_total{service_name=~"$service"}'
            '[$__rate_interval]))', "{{instrumentation}}: {{content}}")], 12, 64, unit="ops",
            description="full: input and output recorded; partial: one of them; masked: hidden by the emitter "
            "(__REDACTED__, [Scrubbed ...]); none: not recorded."),
        panel(19, "Shared judge budget left (all replicas, Redis)", [
            ("min by (judge, unit, window) (evald_judge_coordination_budget_remaining)",
             "{{judge}} {{unit}}/{{window}}")], 0, 72,
            description="Judges with `coordination`: the limit minus what every replica was charged in the current "
            "UTC window, as each replica last read it from Redis (min: the most recent view)."),
        panel(20, "Shared judge governance: reservations and fallbacks", [
            ("sum by (judge, result) (rate(evald_judge_coordination_reservations_total[$__rate_interval]))",
             "{{judge}} {{result}}"),
            ("sum by (judge, component, reason) (rate(evald_judge_coordination_fallbacks_total[$__rate_interval]))",
             "fallback {{judge}} {{component}}: {{reason}}")], 12, 72, unit="ops",
            description="A fallback is an operation governed in process at the replica's share (limit / "
            "expected_replicas) because Redis could not be used; docs/judges.md, Shared governance."),
        panel(21, "Redis latency p99 (shared judge governance)", [(
            "histogram_quantile(0.99, sum by (le, judge, operation) (rate("
            "evald_judge_coordination_redis_duration_seconds_bucket[$__rate_interval])))",
            "{{judge}} {{operation}}")], 0, 80, unit="s"),
        panel(22, "Redis reachability and errors (shared judge governance)", [
            ("min by (judge) (evald_judge_coordination_up)", "up {{judge}} (min over replicas)"),
            ("sum by (judge, reason) (rate(evald_judge_coordination_redis_errors_total[$__rate_interval]))",
             "errors {{judge}}: {{reason}}")], 12, 80,
            description="up 0: at least one replica governs in process; it reconnects in the background."),
        panel(23, "Pass rate against evald's own baseline", [
            (f"max by (metric, service_name) (evald_pass_rate_ratio{{{SEL}}})", "now {{metric}} {{service_name}}"),
            (f"max by (metric, service_name) (evald_pass_rate_baseline_ratio{{{SEL}}})",
             "baseline {{metric}} {{service_name}}")], 0, 88, unit="percentunit", links=explorer_links(),
            description="The exporter's online baseline (evald_pass_rate_baseline_ratio: the pass rate over "
            "baseline_window, default 1 day), kept by evald itself: no long Prometheus retention needed."),
        panel(24, "Regressions flagged by evald (alert EvaldPassRateBelowBaseline)", [
            (f"max by (metric, service_name, model) (evald_pass_rate_regression{{{SEL}}}) == 1",
             "{{metric}} {{service_name}} {{model}}")], 12, 88, kind="table", links=explorer_links(),
            description="Series where evald_pass_rate_regression is 1: the pass rate is more than "
            "regression_margin below the baseline with enough evaluations in both windows. Click a row for the "
            "failing cases."),
    ]
    variable = {"type": "query", "datasource": DS, "refresh": 2, "includeAll": True, "multi": True,
                "allValue": ".*", "current": {"text": "All", "value": "$__all"}}
    return {
        "uid": "evald-overview", "title": "evald — evaluation quality", "tags": ["evald", "llm", "evaluation"],
        "schemaVersion": 39, "version": 1, "editable": True, "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s", "panels": panels,
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"},
            {**variable, "name": "service", "label": "service",
             "query": {"query": "label_values(evald_evaluations_total, service_name)", "refId": "service"},
             "definition": "label_values(evald_evaluations_total, service_name)"},
            {**variable, "name": "metric", "label": "metric",
             "query": {"query": "label_values(evald_evaluations_total, metric)", "refId": "metric"},
             "definition": "label_values(evald_evaluations_total, metric)"},
            {"name": "explorer_url", "type": "textbox", "label": "evald explorer URL", "query": EXPLORER_DEFAULT,
             "current": {"text": EXPLORER_DEFAULT, "value": EXPLORER_DEFAULT},
             "description": "Base URL of evald's admin port (the explorer at /debug/evaluations)"},
        ]},
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    text = render()
    for target in TARGETS:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}")
