{{/*
Chart name, truncated to the 63 characters Kubernetes allows in a label value.
*/}}
{{- define "evald.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: the release name, plus the chart name unless the release name already contains it.
*/}}
{{- define "evald.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "evald.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "evald.labels" -}}
helm.sh/chart: {{ include "evald.chart" . }}
{{ include "evald.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: evaluator
{{- end }}

{{/*
Selector labels (immutable on a Deployment: never add to these).
*/}}
{{- define "evald.selectorLabels" -}}
app.kubernetes.io/name: {{ include "evald.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The container image reference.
*/}}
{{- define "evald.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}

{{/*
evald's configuration as YAML text: .Values.rawConfig as is, else .Values.config (a mapping rendered with toYaml,
or a string used as is). The ConfigMap holds it; NOTES.txt checks it for the keys a mode or a mount needs.
*/}}
{{- define "evald.config" -}}
{{- if .Values.rawConfig }}
{{- .Values.rawConfig }}
{{- else if kindIs "string" .Values.config }}
{{- .Values.config }}
{{- else }}
{{- toYaml (required "values: config (evald's configuration) is required" .Values.config) }}
{{- end }}
{{- end }}

{{/*
"true" when the mode has OTLP receivers (standalone, ingest); kafka-scorer serves only the metrics port.
*/}}
{{- define "evald.servesOtlp" -}}
{{- if ne .Values.mode "kafka-scorer" }}true{{ end }}
{{- end }}

{{/*
The container's args: `evald run --config ...`, with `--role` for the kafka-scorer and ingest modes.
*/}}
{{- define "evald.args" -}}
{{- $args := list "run" "--config" "/etc/evald/config.yaml" }}
{{- if eq .Values.mode "kafka-scorer" }}
{{- $args = concat $args (list "--role" "score") }}
{{- else if eq .Values.mode "ingest" }}
{{- $args = concat $args (list "--role" "ingest") }}
{{- end }}
{{- toJson $args }}
{{- end }}

{{/*
Fails the render on value combinations the schema cannot express.
*/}}
{{- define "evald.checkValues" -}}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) }}
{{- fail "values: tls.enabled needs tls.secretName (an existing kubernetes.io/tls Secret)" }}
{{- end }}
{{- if and .Values.tls.clientCASecretName (not .Values.tls.enabled) }}
{{- fail "values: tls.clientCASecretName (mTLS) needs tls.enabled" }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
{{- if and .Values.autoscaling.kafkaLag.enabled (ne .Values.mode "kafka-scorer") }}
{{- fail "values: autoscaling.kafkaLag is only for mode kafka-scorer" }}
{{- end }}
{{- if and (not .Values.autoscaling.kafkaLag.enabled) (kindIs "invalid" .Values.autoscaling.targetCPUUtilizationPercentage) }}
{{- fail "values: autoscaling needs targetCPUUtilizationPercentage or kafkaLag.enabled" }}
{{- end }}
{{- end }}
{{- end }}
