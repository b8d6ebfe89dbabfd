{{/*
evald's alert rule groups (a YAML list), from .Values.prometheusRule.defaultRules. Rendered with the default
values, they are deploy/prometheus/evald-alerts.yaml's `groups` (a test compares the two). Runbook: docs/runbook.md.
*/}}
{{- define "evald.alertGroups" -}}
{{- $r := .Values.prometheusRule.defaultRules -}}
{{- $runbook := .Values.prometheusRule.runbookBaseURL -}}
{{- $by := "metric, dimension, scope, service_name, model" -}}
{{- $pr := $r.passRate -}}
{{- $explorer := trimSuffix "/" (.Values.explorer.externalUrl | default "") -}}
{{- $cases := "" -}}
{{- if $explorer -}}
{{- $cases = printf "%s/debug/evaluations?metric={{ $labels.metric | urlquery }}&service={{ $labels.service_name | urlquery }}&outcome=fail" $explorer -}}
{{- end -}}
- name: evald-quality
  rules:
    {{- range $baseline := $pr.baselines }}
    - alert: EvaldPassRateRegression
      expr: |-
        (
          sum by ({{ $by }}) (rate(evald_evaluations_total{outcome="pass"}[{{ $pr.window }}]))
          /
          sum by ({{ $by }}) (rate(evald_evaluations_total{outcome=~"pass|fail"}[{{ $pr.window }}]))
        )
        < on ({{ $by }})
        (
          sum by ({{ $by }}) (rate(evald_evaluations_total{outcome="pass"}[{{ $pr.window }}] offset {{ $baseline }}))
          /
          sum by ({{ $by }}) (rate(evald_evaluations_total{outcome=~"pass|fail"}[{{ $pr.window }}] offset {{ $baseline }}))
          - {{ $pr.margin }}
        )
        and on ({{ $by }})
        sum by ({{ $by }}) (increase(evald_evaluations_total{outcome=~"pass|fail"}[{{ $pr.window }}])) >= {{ $pr.minEvaluations }}
        and on ({{ $by }})
        sum by ({{ $by }}) (increase(evald_evaluations_total{outcome=~"pass|fail"}[{{ $pr.window }}] offset {{ $baseline }})) >= {{ $pr.minEvaluations }}
      for: {{ $pr.for }}
      labels:
        severity: warning
        baseline: {{ $baseline | quote }}
      annotations:
        summary: Pass rate of evald metric {{`{{ $labels.metric }}`}} ({{`{{ $labels.dimension }}`}}) dropped more than {{ $pr.margin }} below its value {{ $baseline }} ago.
        description: The {{ $pr.window }} pass rate of {{`{{ $labels.metric }}`}} (dimension {{`{{ $labels.dimension }}`}}, scope {{`{{ $labels.scope }}`}}) for service "{{`{{ $labels.service_name }}`}}", model "{{`{{ $labels.model }}`}}" is {{`{{ $value | humanizePercentage }}`}}, more than {{ $pr.margin }} below the same window {{ $baseline }} earlier, for {{ $pr.for }}.
        runbook_url: {{ $runbook }}#evaldpassrateregression
        {{- if $cases }}
        explorer_url: {{ $cases }}
        {{- end }}
    {{- end }}
    {{- if $r.baseline.enabled }}
    - alert: EvaldPassRateBelowBaseline
      expr: |-
        max by ({{ $by }}) (evald_pass_rate_ratio)
        and on ({{ $by }})
        max by ({{ $by }}) (evald_pass_rate_regression) == 1
      for: {{ $r.baseline.for }}
      labels:
        severity: warning
        baseline: in-daemon
      annotations:
        summary: Pass rate of evald metric {{`{{ $labels.metric }}`}} ({{`{{ $labels.dimension }}`}}) is below evald's own baseline.
        description: evald flags the pass rate of {{`{{ $labels.metric }}`}} (dimension {{`{{ $labels.dimension }}`}}, scope {{`{{ $labels.scope }}`}}) for service "{{`{{ $labels.service_name }}`}}", model "{{`{{ $labels.model }}`}}", now {{`{{ $value | humanizePercentage }}`}}, as more than regression_margin below its baseline over baseline_window (evald_pass_rate_regression == 1), for {{ $r.baseline.for }}.
        runbook_url: {{ $runbook }}#evaldpassratebelowbaseline
        {{- if $cases }}
        explorer_url: {{ $cases }}
        {{- end }}
    {{- end }}
    - alert: EvaldSafetyFailures
      expr: |-
        sum by ({{ $by }}) (rate(evald_evaluations_total{dimension="safety", outcome="fail"}[5m])) * 60 > {{ $r.safety.failuresPerMinute }}
      for: {{ $r.safety.for }}
      labels:
        severity: critical
      annotations:
        summary: Safety failures of evald metric {{`{{ $labels.metric }}`}} above {{ $r.safety.failuresPerMinute }} per minute.
        description: Metric {{`{{ $labels.metric }}`}} (dimension safety) fails {{`{{ $value | printf "%.2f" }}`}} cases per minute for service "{{`{{ $labels.service_name }}`}}", model "{{`{{ $labels.model }}`}}".
        runbook_url: {{ $runbook }}#evaldsafetyfailures
        {{- if $cases }}
        explorer_url: {{ $cases }}
        {{- end }}
- name: evald-pipeline
  rules:
    - alert: EvaldReceiverRefusingSpans
      expr: |-
        sum by (job, instance, receiver, transport, reason) (rate(evald_receiver_refused_spans_total[5m])) > 0
      for: {{ $r.receiver.for }}
      labels:
        severity: warning
      annotations:
        summary: evald {{`{{ $labels.instance }}`}} refuses spans ({{`{{ $labels.reason }}`}}).
        description: The {{`{{ $labels.receiver }}`}} receiver ({{`{{ $labels.transport }}`}}) refuses {{`{{ $value | printf "%.2f" }}`}} spans per second with reason {{`{{ $labels.reason }}`}}; the sender was told and may retry or drop them.
        runbook_url: {{ $runbook }}#evaldreceiverrefusingspans
    - alert: EvaldAssemblyDroppingSpans
      expr: |-
        sum by (job, instance, reason) (rate(evald_assembly_dropped_spans_total{reason!="duplicate"}[5m])) > 0
      for: {{ $r.receiver.for }}
      labels:
        severity: warning
      annotations:
        summary: evald {{`{{ $labels.instance }}`}} drops accepted spans ({{`{{ $labels.reason }}`}}).
        description: Trace assembly drops {{`{{ $value | printf "%.2f" }}`}} accepted spans per second with reason {{`{{ $labels.reason }}`}}; their traces are evaluated incompletely or not at all.
        runbook_url: {{ $runbook }}#evaldassemblydroppingspans
    - alert: EvaldExporterSendFailures
      expr: |-
        sum by (job, instance, exporter, reason) (rate(evald_exporter_send_failed_cases_total[5m])) > 0
      for: {{ $r.exporter.for }}
      labels:
        severity: warning
      annotations:
        summary: evald exporter {{`{{ $labels.exporter }}`}} fails to take scored cases ({{`{{ $labels.reason }}`}}).
        description: Exporter {{`{{ $labels.exporter }}`}} on {{`{{ $labels.instance }}`}} failed {{`{{ $value | printf "%.2f" }}`}} cases per second with reason {{`{{ $labels.reason }}`}}.
        runbook_url: {{ $runbook }}#evaldexportersendfailures
    - alert: EvaldExporterDroppingScores
      expr: |-
        sum by (job, instance, exporter, reason) (rate(evald_exporter_dropped_scores_total[5m])) > 0
      for: {{ $r.exporter.for }}
      labels:
        severity: warning
      annotations:
        summary: evald exporter {{`{{ $labels.exporter }}`}} drops scores ({{`{{ $labels.reason }}`}}).
        description: Exporter {{`{{ $labels.exporter }}`}} on {{`{{ $labels.instance }}`}} drops {{`{{ $value | printf "%.2f" }}`}} scores per second with reason {{`{{ $labels.reason }}`}}; they never reach the backend.
        runbook_url: {{ $runbook }}#evaldexporterdroppingscores
    - alert: EvaldUnauthenticatedRequests
      expr: |-
        sum by (job, instance, receiver, transport, reason) (rate(evald_receiver_unauthenticated_requests_total[5m])) * 60 > {{ $r.auth.requestsPerMinute }}
      for: {{ $r.auth.for }}
      labels:
        severity: warning
      annotations:
        summary: evald {{`{{ $labels.instance }}`}} refuses unauthenticated OTLP requests ({{`{{ $labels.reason }}`}}).
        description: The {{`{{ $labels.receiver }}`}} receiver ({{`{{ $labels.transport }}`}}) refuses {{`{{ $value | printf "%.1f" }}`}} requests per minute with reason {{`{{ $labels.reason }}`}} (above {{ $r.auth.requestsPerMinute }}); a sender lost its token or something probes the port.
        runbook_url: {{ $runbook }}#evaldunauthenticatedrequests
    - alert: EvaldKafkaLagGrowing
      expr: |-
        deriv((sum by (job, receiver, topic) (evald_kafka_consumer_lag))[{{ $r.kafka.window }}:1m]) > 0
        and on (job, receiver, topic)
        sum by (job, receiver, topic) (evald_kafka_consumer_lag) > {{ $r.kafka.lagFloor }}
      for: {{ $r.kafka.for }}
      labels:
        severity: warning
      annotations:
        summary: evald's Kafka consumer group falls behind on topic {{`{{ $labels.topic }}`}}.
        description: The summed consumer lag of receiver {{`{{ $labels.receiver }}`}} on topic {{`{{ $labels.topic }}`}} grows by {{`{{ $value | printf "%.1f" }}`}} records per second and is above {{ $r.kafka.lagFloor }} records, for {{ $r.kafka.for }}; scores arrive later and later.
        runbook_url: {{ $runbook }}#evaldkafkalaggrowing
- name: evald-judges
  rules:
    - alert: EvaldJudgeErrorRate
      expr: |-
        sum by (job, instance, judge) (rate(evald_judge_requests_total{outcome=~"rate_limited|server_error|timeout|malformed"}[5m]))
        /
        sum by (job, instance, judge) (rate(evald_judge_requests_total{outcome=~"ok|rate_limited|server_error|timeout|malformed"}[5m]))
        > {{ $r.judge.errorRatio }}
      for: {{ $r.judge.for }}
      labels:
        severity: warning
      annotations:
        summary: LLM judge {{`{{ $labels.judge }}`}} fails {{`{{ $value | humanizePercentage }}`}} of its requests.
        description: On {{`{{ $labels.instance }}`}}, more than {{ $r.judge.errorRatio }} of the requests sent to judge {{`{{ $labels.judge }}`}} end rate_limited, server_error, timeout or malformed; the metrics it backs are skipped or error instead of scored.
        runbook_url: {{ $runbook }}#evaldjudgeerrorrate
    - alert: EvaldJudgeBudgetExhausted
      expr: |-
        min by (job, instance, judge) (evald_judge_budget_remaining_usd{window="day"}) <= 0
        or
        sum by (job, instance, judge) (increase(evald_judge_requests_total{outcome="budget_exhausted"}[10m])) > 0
      for: {{ $r.judge.budgetFor }}
      labels:
        severity: warning
      annotations:
        summary: LLM judge {{`{{ $labels.judge }}`}} has spent its budget.
        description: Judge {{`{{ $labels.judge }}`}} on {{`{{ $labels.instance }}`}} has no day budget left or refuses requests as budget_exhausted; its metrics are skipped (evald_metric_skips_total{reason="budget_exhausted"}) until the window rolls over.
        runbook_url: {{ $runbook }}#evaldjudgebudgetexhausted
    - alert: EvaldJudgeCircuitOpen
      expr: |-
        max by (job, instance, judge) (evald_judge_circuit_state) == 1
      for: {{ $r.judge.circuitFor }}
      labels:
        severity: warning
      annotations:
        summary: The circuit breaker of LLM judge {{`{{ $labels.judge }}`}} is open.
        description: Judge {{`{{ $labels.judge }}`}} on {{`{{ $labels.instance }}`}} failed often enough that evald stopped calling it (circuit open) for {{ $r.judge.circuitFor }}; its metrics are skipped with reason circuit_open.
        runbook_url: {{ $runbook }}#evaldjudgecircuitopen
{{- end }}
