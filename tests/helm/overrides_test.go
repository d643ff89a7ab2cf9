// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Non-default values reach the objects: testdata/full.yaml sets every group of values.
package helmtest

import "testing"

func TestFullOverridesReachTheObjects(t *testing.T) {
	r := render(t, "full.yaml")
	for _, o := range r.objs {
		if o.Name() != "node-profiler" && o.Kind() != "ServiceAccount" {
			t.Errorf("%s is named %q, want fullnameOverride", o.Kind(), o.Name())
		}
	}
	spec, c := r.podSpec(t), r.container(t)
	equal(t, "image", c["image"], "registry.example.com/obs/spanprof:0.1.0-rc1")
	equal(t, "pullPolicy", c["imagePullPolicy"], "Always")
	equal(t, "pull secrets", spec["imagePullSecrets"],
		[]interface{}{map[string]interface{}{"name": "regcred"}})
	equal(t, "args", Strings(c, "args"),
		[]string{"--config", "/etc/spanprof/config.yaml", "--label=release=spanprof"})
	equal(t, "extra env", Get(c, "env.name=TZ.value"), "UTC")
	equal(t, "NODE_NAME kept", Get(c, "env.name=NODE_NAME.valueFrom.fieldRef.fieldPath"),
		"spec.nodeName")
	// Lists replace the defaults; maps merge into them, as with `helm install -f`.
	equal(t, "tolerations", spec["tolerations"], []interface{}{map[string]interface{}{
		"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}})
	equal(t, "nodeSelector", spec["nodeSelector"], map[string]interface{}{
		"kubernetes.io/os": "linux", "node-role.example.com/worker": "true"})
	equal(t, "affinity", Get(spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnored"+
		"DuringExecution.nodeSelectorTerms.0.matchExpressions.0.key"), "kubernetes.io/arch")
	equal(t, "priorityClassName", spec["priorityClassName"], "observability-critical")
	equal(t, "service account", spec["serviceAccountName"], "profiler")
	equal(t, "SA annotation", Get(r.one(t, "ServiceAccount"),
		"metadata.annotations").(map[string]interface{})["example.com/owner"], "observability")
	ds := r.one(t, "DaemonSet")
	equal(t, "pod label", Get(ds, "spec.template.metadata.labels.team"), "observability")
	ann := Get(ds, "spec.template.metadata.annotations").(map[string]interface{})
	equal(t, "pod annotation", ann["example.com/team"], "observability")
	equal(t, "resources", c["resources"], map[string]interface{}{
		"requests": map[string]interface{}{"cpu": "100m", "memory": "96Mi"},
		"limits":   map[string]interface{}{"memory": "256Mi"},
	})
	equal(t, "metrics port", Get(c, "ports.name=metrics.containerPort"), 9400)
	equal(t, "debug volume", Get(spec, "volumes.name=debug.hostPath.path"), "/usr/lib/debug")
	equal(t, "debug mount", Get(c, "volumeMounts.name=debug.mountPath"), "/usr/lib/debug")
	equal(t, "seccomp", securityContext(t, r)["seccompProfile"], map[string]interface{}{
		"type": "Localhost", "localhostProfile": "profiles/spanprof.json"})
	equal(t, "SELinux", securityContext(t, r)["seLinuxOptions"],
		map[string]interface{}{"type": "spc_t"})
}

func TestFullOverridesReachTheAgentConfiguration(t *testing.T) {
	r := render(t, "full.yaml")
	equal(t, "config.yaml", r.agentConfig(t), map[string]interface{}{
		"server":          "https://profiles.observability.example.com/",
		"tenant":          "team-a",
		"labels":          map[string]interface{}{"cluster": "prod-eu-1", "env": "prod", "k8s.zone": "eu-1a"},
		"headers":         []interface{}{"X-Extra: yes"},
		"frequency":       49,
		"interval":        10,
		"span-scope":      "all",
		"trace-id-label":  true,
		"log-level":       "debug",
		"log-format":      "json",
		"connect-timeout": 3,
		"upload-timeout":  20,
		"queue-bytes":     "32MiB",
		"spool":           "/var/lib/spanprof/spool",
		"spool-bytes":     "1GiB",
		"metrics-addr":    "0.0.0.0:9400",
		"ca-file":         "/etc/spanprof/tls/ca.crt",
		"client-cert":     "/etc/spanprof/tls/client.crt",
		"client-key":      "/etc/spanprof/tls/client.key",
		"duration":        86400,
	})
	spec := r.podSpec(t)
	equal(t, "spool on the node", Get(spec, "volumes.name=spool.hostPath"),
		map[string]interface{}{"path": "/var/lib/spanprof/spool", "type": "DirectoryOrCreate"})
	equal(t, "TLS volume", Get(spec, "volumes.name=tls.secret.items"), []interface{}{
		map[string]interface{}{"key": "ca.crt", "path": "ca.crt"},
		map[string]interface{}{"key": "tls.crt", "path": "client.crt"},
		map[string]interface{}{"key": "tls.key", "path": "client.key"},
	})
	equal(t, "TLS mount", Get(r.container(t), "volumeMounts.name=tls.mountPath"),
		"/etc/spanprof/tls")
}

func TestSpoolDisabled(t *testing.T) {
	r := render(t, "server.yaml", "config: {spool: {enabled: false}}")
	if Get(r.podSpec(t), "volumes.name=spool") != nil ||
		Get(r.container(t), "volumeMounts.name=spool") != nil {
		t.Error("spool volume rendered while disabled")
	}
	cfg := r.agentConfig(t)
	if cfg["spool"] != nil || cfg["spool-bytes"] != nil {
		t.Errorf("spool configured while disabled: %v", cfg)
	}
}

func TestTLSInsecureAndNullsRemoveDefaults(t *testing.T) {
	r := render(t, "server.yaml", "tls: {insecureSkipVerify: true}\nnodeSelector: null")
	equal(t, "tls-insecure", r.agentConfig(t)["tls-insecure"], true)
	equal(t, "nodeSelector", r.podSpec(t)["nodeSelector"], nil)
}
