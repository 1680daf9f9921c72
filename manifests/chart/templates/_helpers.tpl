{{/*
Names, labels and the checks of the values that every template shares.

Names are fixed, not prefixed with the release name: the scheduler's Lease
(slurm-bridge, bridge/main.c), the Secrets the certificate job writes and
the service account the webhook trusts (--bridge-user) are found by these
names.  So the default release, slurm-bridge, gives exactly the names of
the plain manifests, and there is one release per cluster.
*/}}

{{/* The chart's base name: every object name starts with it. */}}
{{- define "slurm-bridge.fullname" -}}
slurm-bridge
{{- end }}

{{/* The admission webhook's name (Deployment, Service, ServiceAccount). */}}
{{- define "slurm-bridge.admission" -}}
{{ include "slurm-bridge.fullname" . }}-admission
{{- end }}

{{/* The certificate job's name (Job, ServiceAccount, Role). */}}
{{- define "slurm-bridge.certs" -}}
{{ include "slurm-bridge.fullname" . }}-certs
{{- end }}

{{/* name-version, for the helm.sh/chart label. */}}
{{- define "slurm-bridge.chart" -}}
{{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.  Call with (dict "ctx" $ "name" NAME "component" C):
name is app.kubernetes.io/name, which the Deployments also select on;
component is optional.
*/}}
{{- define "slurm-bridge.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/part-of: {{ include "slurm-bridge.fullname" .ctx }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ include "slurm-bridge.chart" .ctx }}
{{- end }}

{{/*
Labels of a pod template: those above but helm.sh/chart and managed-by, so
a new chart version alone does not roll the pods.
*/}}
{{- define "slurm-bridge.podLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/part-of: {{ include "slurm-bridge.fullname" .ctx }}
{{- end }}

{{/*
What a Deployment selects its pods by: app.kubernetes.io/name alone, as the
plain manifests always did (a Deployment's selector cannot change, so
adding labels here would break kubectl apply over an existing install).
*/}}
{{- define "slurm-bridge.selector" -}}
app.kubernetes.io/name: {{ . }}
{{- end }}

{{/* An image reference: (dict "ctx" $ "repository" REPO). */}}
{{- define "slurm-bridge.image" -}}
{{- $v := .ctx.Values.image -}}
{{- $tag := $v.tag | default .ctx.Chart.AppVersion -}}
{{- if $v.registry -}}
{{ printf "%s/%s:%s" (trimSuffix "/" $v.registry) .repository $tag }}
{{- else -}}
{{ printf "%s:%s" .repository $tag }}
{{- end }}
{{- end }}

{{/*
The name of both webhook configurations, which the webhook keeps caBundle
of (--webhook-configuration) and the admission ClusterRole may patch.
*/}}
{{- define "slurm-bridge.webhookConfiguration" -}}
{{ include "slurm-bridge.fullname" . }}
{{- end }}

{{/* The ConfigMap with slurm.conf (not used when configless). */}}
{{- define "slurm-bridge.slurmConfConfigMap" -}}
{{- if .Values.slurm.config -}}
{{ include "slurm-bridge.fullname" . }}-slurm-conf
{{- else -}}
{{ required "slurm.existingConfigMap (or slurm.config, or slurm.configless.server) is required" .Values.slurm.existingConfigMap }}
{{- end }}
{{- end }}

{{/* The Secret with munge.key (not used with munge.socketHostPath). */}}
{{- define "slurm-bridge.mungeSecret" -}}
{{- if .Values.munge.key -}}
{{ include "slurm-bridge.fullname" . }}-munge
{{- else -}}
{{ required "munge.existingSecret (or munge.key, or munge.socketHostPath) is required" .Values.munge.existingSecret }}
{{- end }}
{{- end }}

{{/* Checks of combinations no single value can express; renders nothing. */}}
{{- define "slurm-bridge.validate" -}}
{{- if and .Values.slurm.config .Values.slurm.configless.server }}
{{- fail "set slurm.config or slurm.configless.server, not both" }}
{{- end }}
{{- if and .Values.munge.key .Values.munge.socketHostPath }}
{{- fail "set munge.key or munge.socketHostPath, not both" }}
{{- end }}
{{- if and .Values.munge.socketHostPath (not (isAbs .Values.munge.socketHostPath)) }}
{{- fail "munge.socketHostPath must be an absolute path, e.g. /run/munge" }}
{{- end }}
{{- if or (lt (int .Values.certs.days) 1) (gt (int .Values.certs.days) 3650) }}
{{- fail "certs.days must be 1 to 3650 (slurm-bridge-admission --days)" }}
{{- end }}
{{- end }}

{{/*
The restricted Pod Security container context every container shares: no
privilege escalation, no capabilities, RuntimeDefault seccomp, read-only
root.  The UID comes from the pod.
*/}}
{{- define "slurm-bridge.containerSecurity" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities: {drop: [ALL]}
seccompProfile: {type: RuntimeDefault}
{{- end }}

{{/* nodeSelector, tolerations and imagePullSecrets of every pod. */}}
{{- define "slurm-bridge.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
A Deployment's affinity: the value given, else a preferred anti-affinity
that spreads the replicas over nodes.  (dict "ctx" $ "name" NAME
"affinity" VALUE).
*/}}
{{- define "slurm-bridge.affinity" -}}
{{- if .affinity }}
{{- toYaml .affinity }}
{{- else -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 100
    podAffinityTerm:
      topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels: {app.kubernetes.io/name: {{ .name }}}
{{- end }}
{{- end }}
