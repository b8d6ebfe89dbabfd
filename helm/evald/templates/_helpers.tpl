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
{{- $config := deepCopy (required "values: config (evald's configuration) is required" .Values.config) }}
{{- $redis := dig "judgeCoordination" "redis" dict .Values.AsMap }}
{{- if and $redis.url (kindIs "map" (dig "judges" nil $config)) }}
{{- range $name, $judge := $config.judges }}
{{- if and (kindIs "map" $judge) (not (hasKey $judge "coordination")) }}
{{- $_ := set $judge "coordination" (include "evald.judgeCoordination" $ | fromYaml) }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $config }}
{{- end }}
{{- end }}

{{/*
What values.judgeCoordination injects into each judge of `config` (docs/judges.md, Shared governance).
*/}}
{{- define "evald.judgeCoordination" -}}
{{- $c := .Values.judgeCoordination }}
{{- $most := .Values.autoscaling.enabled | ternary .Values.autoscaling.maxReplicas .Values.replicaCount }}
redis:
  url: ${env:EVALD_REDIS_URL}
  key_prefix: {{ $c.redis.keyPrefix | default (include "evald.fullname" .) | quote }}
  timeout: {{ $c.redis.timeout | default "1s" | quote }}
  {{- if $c.redis.existingSecret }}
  password: ${env:EVALD_REDIS_PASSWORD}
  {{- end }}
expected_replicas: {{ $c.expectedReplicas | default $most | int }}
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
The pod's ServiceAccount name: serviceAccount.name, or the full name when the chart creates it; "" (the
namespace's default account) otherwise.
*/}}
{{- define "evald.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "evald.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
config pipeline.shutdown_timeout in seconds, as evald parses it (a number of seconds, or "<n><ns|us|µs|ms|s|m|h>";
absent: 10), or "" when it is not a literal (e.g. ${env:...}) and cannot be checked here.
*/}}
{{- define "evald.shutdownSeconds" -}}
{{- $parsed := fromYaml (include "evald.config" .) }}
{{- $value := dig "pipeline" "shutdown_timeout" "10s" $parsed }}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 "" 1.0 }}
{{- if or (kindIs "float64" $value) (kindIs "int" $value) (kindIs "int64" $value) }}
{{- float64 $value }}
{{- else if and (kindIs "string" $value) (regexMatch `^\s*[0-9]+(\.[0-9]+)?\s*(ns|us|µs|ms|s|m|h)?\s*$` $value) }}
{{- $number := regexFind `[0-9]+(\.[0-9]+)?` $value }}
{{- $unit := regexReplaceAll `[0-9.\s]` $value "" }}
{{- mulf (float64 $number) (get $units $unit) }}
{{- end }}
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
{{- $shutdown := include "evald.shutdownSeconds" . }}
{{- if $shutdown }}
{{- $sleep := .Values.preStop.enabled | ternary .Values.preStop.sleepSeconds 0 }}
{{- if le (float64 .Values.terminationGracePeriodSeconds) (addf $shutdown $sleep) }}
{{- fail (printf "values: terminationGracePeriodSeconds (%v) must be greater than config pipeline.shutdown_timeout (%vs) + preStop.sleepSeconds (%v), or the kubelet kills evald before it drains" .Values.terminationGracePeriodSeconds $shutdown $sleep) }}
{{- end }}
{{- end }}
{{- $volumes := list "config" "tmp" }}
{{- range .Values.extraVolumes }}{{ $volumes = append $volumes .name }}{{ end }}
{{- range .Values.extraVolumeMounts }}
{{- if not (has .name $volumes) }}
{{- fail (printf "values: extraVolumeMounts %q names no volume (extraVolumes: %s)" .name (join ", " $volumes)) }}
{{- end }}
{{- if or (eq (clean .mountPath) "/etc/evald" "/tmp") (hasPrefix "/etc/evald/" (clean .mountPath)) }}
{{- fail (printf "values: extraVolumeMounts %q: mountPath %s is inside the chart's own mounts (/etc/evald, /tmp); mount beside them, e.g. /etc/evald-references" .name .mountPath) }}
{{- end }}
{{- end }}
{{- with .Values.persistence }}
{{- if .enabled }}
{{- if or $.Values.autoscaling.enabled (gt (int $.Values.replicaCount) 1) }}
{{- fail "values: persistence needs a single replica (replicaCount 1, no autoscaling): each write-ahead log and sending-queue file belongs to one evald process" }}
{{- end }}
{{- if has "data" $volumes }}
{{- fail "values: persistence mounts a volume named data; rename the extraVolumes entry of that name" }}
{{- end }}
{{- $path := clean .mountPath }}
{{- if or (eq $path "/etc/evald" "/tmp") (hasPrefix "/etc/evald/" $path) (hasPrefix "/tmp/" $path) }}
{{- fail (printf "values: persistence.mountPath %s is inside the chart's own mounts (/etc/evald, /tmp)" .mountPath) }}
{{- end }}
{{- end }}
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
