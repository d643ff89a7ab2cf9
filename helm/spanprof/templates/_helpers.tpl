{{/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */}}
{{/* Names, labels, the agent's security context and its configuration file, shared by the
     templates. Only Helm built-ins tests/helm implements are used (see README.md). */}}

{{- define "spanprof.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release name alone when it already contains the chart's name. */}}
{{- define "spanprof.fullname" -}}
{{- $name := .Values.nameOverride | default .Chart.Name -}}
{{- $long := printf "%s-%s" .Release.Name $name -}}
{{- $full := ternary .Release.Name $long (contains $name .Release.Name) -}}
{{- .Values.fullnameOverride | default $full | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "spanprof.selectorLabels" -}}
app.kubernetes.io/name: {{ include "spanprof.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "spanprof.labels" -}}
{{ include "spanprof.selectorLabels" . }}
app.kubernetes.io/component: agent
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
{{- end -}}

{{- define "spanprof.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "spanprof.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "spanprof.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The capabilities the agent needs: eBPF and perf (BPF, PERFMON), reading other processes'
     /proc/PID/{maps,root,environ} (SYS_PTRACE, DAC_READ_SEARCH), /proc/PID/map_files
     (CHECKPOINT_RESTORE), raising RLIMIT_MEMLOCK on old kernels (SYS_RESOURCE), kallsyms
     addresses (SYSLOG), and uprobes on current kernels (SYS_ADMIN). */}}
{{- define "spanprof.capabilities" -}}
{{- $sc := .Values.securityContext -}}
{{- $caps := list "BPF" "PERFMON" "SYS_PTRACE" "DAC_READ_SEARCH" "CHECKPOINT_RESTORE" "SYS_RESOURCE" "SYSLOG" -}}
{{- if $sc.sysAdmin -}}
{{- $caps = append $caps "SYS_ADMIN" -}}
{{- end -}}
{{- concat $caps $sc.extraCapabilities | uniq | toYaml -}}
{{- end -}}

{{- define "spanprof.runsAsRoot" -}}
{{- if eq (int .Values.securityContext.runAsUser) 0 }}true{{ end -}}
{{- end -}}

{{/* Kubernetes 1.30 made AppArmor a securityContext field; older versions read an annotation. */}}
{{- define "spanprof.appArmorField" -}}
{{- semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version | ternary "true" "" -}}
{{- end -}}

{{- define "spanprof.appArmorAnnotation" -}}
{{- $p := .Values.securityContext.appArmorProfile -}}
{{- if and $p (not (include "spanprof.appArmorField" .)) -}}
{{- $value := dict "Unconfined" "unconfined" "RuntimeDefault" "runtime/default" -}}
{{- $_ := set $value "Localhost" (printf "localhost/%s" ($p.localhostProfile | default "")) -}}
container.apparmor.security.beta.kubernetes.io/spanprof: {{ get $value $p.type | quote }}
{{- end -}}
{{- end -}}

{{- define "spanprof.containerSecurityContext" -}}
{{- $sc := .Values.securityContext -}}
{{- $root := include "spanprof.runsAsRoot" . -}}
{{- if and (not $root) (or $sc.sysAdmin $sc.extraCapabilities) -}}
{{- fail "securityContext.sysAdmin and securityContext.extraCapabilities need runAsUser 0: a non-root agent only has the image's file capabilities" -}}
{{- end -}}
{{- if $sc.privileged -}}
privileged: true
{{- else -}}
privileged: false
{{- /* File capabilities (the non-root case) are ignored under no_new_privs. */}}
allowPrivilegeEscalation: {{ not $root }}
capabilities:
  drop:
    - ALL
  add:
    {{- include "spanprof.capabilities" . | nindent 4 }}
{{- end }}
runAsUser: {{ int $sc.runAsUser }}
runAsGroup: {{ int $sc.runAsGroup }}
runAsNonRoot: {{ not $root }}
readOnlyRootFilesystem: {{ $sc.readOnlyRootFilesystem }}
{{- with $sc.seccompProfile }}
seccompProfile:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if and $sc.appArmorProfile (include "spanprof.appArmorField" .) }}
appArmorProfile:
  {{- toYaml $sc.appArmorProfile | nindent 2 }}
{{- end }}
{{- with $sc.seLinuxOptions }}
seLinuxOptions:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Where secrets and TLS files appear in the container. */}}
{{- define "spanprof.secretDir" -}}/etc/spanprof/secrets{{- end -}}
{{- define "spanprof.tlsDir" -}}/etc/spanprof/tls{{- end -}}

{{- define "spanprof.checkAuth" -}}
{{- $a := .Values.auth -}}
{{- if and (or $a.basicAuth.passwordKey $a.basicAuth.userKey $a.bearerTokenKey) (not $a.existingSecret) -}}
{{- fail "auth.existingSecret must name the Secret holding auth.basicAuth.passwordKey, userKey or bearerTokenKey" -}}
{{- end -}}
{{- if and $a.bearerTokenKey (or $a.basicAuth.passwordKey $a.basicAuth.user $a.basicAuth.userKey) -}}
{{- fail "use either basic auth or a bearer token, not both" -}}
{{- end -}}
{{- if and $a.basicAuth.user $a.basicAuth.userKey -}}
{{- fail "set auth.basicAuth.user or auth.basicAuth.userKey, not both" -}}
{{- end -}}
{{- if and (or $a.basicAuth.user $a.basicAuth.userKey) (not $a.basicAuth.passwordKey) -}}
{{- fail "basic auth needs auth.basicAuth.passwordKey" -}}
{{- end -}}
{{- $t := .Values.tls -}}
{{- if and (or $t.caKey $t.certKey $t.keyKey) (not $t.existingSecret) -}}
{{- fail "tls.existingSecret must name the Secret holding tls.caKey, certKey and keyKey" -}}
{{- end -}}
{{- if ne (empty $t.certKey) (empty $t.keyKey) -}}
{{- fail "tls.certKey and tls.keyKey go together" -}}
{{- end -}}
{{- end -}}

{{/* The agent's YAML configuration: keys are its long flag names. */}}
{{- define "spanprof.agentConfig" -}}
{{- include "spanprof.checkAuth" . -}}
{{- $c := .Values.config -}}
{{- $server := required "config.server is required: the URL of your Pyroscope server, e.g. http://pyroscope.pyroscope.svc:4040" $c.server -}}
{{- $cfg := dict "server" (tpl $server .) "frequency" $c.frequency "interval" $c.interval -}}
{{- $_ := set $cfg "span-scope" $c.spanScope -}}
{{- if $c.traceIdLabel }}{{ $_ := set $cfg "trace-id-label" true }}{{ end -}}
{{- $_ := set $cfg "log-level" $c.logLevel -}}
{{- $_ := set $cfg "log-format" $c.logFormat -}}
{{- with $c.tenant }}{{ $_ := set $cfg "tenant" . }}{{ end -}}
{{- with $c.labels }}{{ $_ := set $cfg "labels" . }}{{ end -}}
{{- with $c.headers }}{{ $_ := set $cfg "headers" . }}{{ end -}}
{{- with $c.connectTimeout }}{{ $_ := set $cfg "connect-timeout" . }}{{ end -}}
{{- with $c.uploadTimeout }}{{ $_ := set $cfg "upload-timeout" . }}{{ end -}}
{{- with $c.queueBytes }}{{ $_ := set $cfg "queue-bytes" . }}{{ end -}}
{{- if $c.spool.enabled -}}
{{- $_ := set $cfg "spool" "/var/lib/spanprof/spool" -}}
{{- with $c.spool.maxBytes }}{{ $_ := set $cfg "spool-bytes" . }}{{ end -}}
{{- end -}}
{{- if .Values.metrics.enabled -}}
{{- $_ := set $cfg "metrics-addr" (printf "%s:%d" .Values.metrics.host (int .Values.metrics.port)) -}}
{{- end -}}
{{- $a := .Values.auth -}}
{{- with $a.basicAuth.user }}{{ $_ := set $cfg "basic-auth-user" . }}{{ end -}}
{{- if eq $a.secretsAs "file" -}}
{{- if $a.basicAuth.passwordKey -}}
{{- $_ := set $cfg "basic-auth-password-file" (printf "%s/basic-auth-password" (include "spanprof.secretDir" .)) -}}
{{- end -}}
{{- if $a.bearerTokenKey -}}
{{- $_ := set $cfg "bearer-token-file" (printf "%s/bearer-token" (include "spanprof.secretDir" .)) -}}
{{- end -}}
{{- end -}}
{{- $t := .Values.tls -}}
{{- if $t.caKey }}{{ $_ := set $cfg "ca-file" (printf "%s/ca.crt" (include "spanprof.tlsDir" .)) }}{{ end -}}
{{- if $t.certKey -}}
{{- $_ := set $cfg "client-cert" (printf "%s/client.crt" (include "spanprof.tlsDir" .)) -}}
{{- $_ := set $cfg "client-key" (printf "%s/client.key" (include "spanprof.tlsDir" .)) -}}
{{- end -}}
{{- if $t.insecureSkipVerify }}{{ $_ := set $cfg "tls-insecure" true }}{{ end -}}
{{- merge $cfg $c.extra | toYaml -}}
{{- end -}}
