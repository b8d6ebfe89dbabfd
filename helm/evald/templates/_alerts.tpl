{{/*
evald's alert rule groups (a YAML list), from .Values.prometheusRule.defaultRules. Rendered with the default
values, they are deploy/prometheus/evald-alerts.yaml's `groups` (a test compares the two). Runbook: docs/runbook.md.
*/}}
{{- define "evald.alertGroups" -}}
{{- $r := .Values.prometheusRule.defaultRules -}}
{{- $runbook := .Values.prometheusRule.runbookBaseURL -}}
{{- $by := "metric, dimension, scope, service_name, model" -}}
{{- $pr := $r.passRate -}}
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
{{- end }}
