// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// The chart with its default values (plus the required server): which objects, where the
// agent runs, what it mounts, its configuration file, RBAC, resources and NOTES.
package helmtest

import (
	"strings"
	"testing"
)

func TestDefaultsNeedAServer(t *testing.T) {
	_, err := tryRender(DefaultRelease)
	if err == nil || !strings.Contains(err.Error(), "config.server is required") {
		t.Fatalf("want the config.server error, got %v", err)
	}
}

func TestDefaultsRenderTheAgentObjectsAndNoSecret(t *testing.T) {
	r := render(t, "server.yaml")
	equal(t, "kinds", r.kinds(), []string{"ClusterRole", "ClusterRoleBinding", "ConfigMap",
		"DaemonSet", "Service", "ServiceAccount"})
	for _, o := range r.objs {
		if o.Name() != "spanprof" {
			t.Errorf("%s is named %q, want the release name", o.Kind(), o.Name())
		}
		if o.Kind() != "ClusterRole" && o.Kind() != "ClusterRoleBinding" &&
			Get(o, "metadata.namespace") != "observability" {
			t.Errorf("%s %s is not in the release namespace", o.Kind(), o.Name())
		}
		labels, _ := Get(o, "metadata.labels").(map[string]interface{})
		if labels["app.kubernetes.io/instance"] != "spanprof" ||
			labels["app.kubernetes.io/managed-by"] != "Helm" {
			t.Errorf("%s %s has labels %v", o.Kind(), o.Name(), labels)
		}
	}
}

func TestDaemonSetRunsOnEveryNodeInTheHostPIDNamespace(t *testing.T) {
	r := render(t, "server.yaml")
	spec := r.podSpec(t)
	equal(t, "hostPID", spec["hostPID"], true)
	equal(t, "hostNetwork", spec["hostNetwork"], nil)
	equal(t, "tolerations", spec["tolerations"],
		[]interface{}{map[string]interface{}{"operator": "Exists"}})
	equal(t, "nodeSelector", spec["nodeSelector"],
		map[string]interface{}{"kubernetes.io/os": "linux"})
	equal(t, "priorityClassName", spec["priorityClassName"], nil)
	equal(t, "affinity", spec["affinity"], nil)
	ds := r.one(t, "DaemonSet")
	equal(t, "selector", Get(ds, "spec.selector.matchLabels"), map[string]interface{}{
		"app.kubernetes.io/name": "spanprof", "app.kubernetes.io/instance": "spanprof"})
	podLabels, _ := Get(ds, "spec.template.metadata.labels").(map[string]interface{})
	for k, v := range Get(ds, "spec.selector.matchLabels").(map[string]interface{}) {
		if podLabels[k] != v {
			t.Errorf("pod label %s=%v does not match the selector's %v", k, podLabels[k], v)
		}
	}
	c := r.container(t)
	equal(t, "image", c["image"], "ghcr.io/spanprof/spanprof:0.1.0")
	equal(t, "imagePullPolicy", c["imagePullPolicy"], "IfNotPresent")
	equal(t, "args", Strings(c, "args"), []string{"--config", "/etc/spanprof/config.yaml"})
	equal(t, "NODE_NAME", Get(c, "env.name=NODE_NAME.valueFrom.fieldRef.fieldPath"),
		"spec.nodeName")
	equal(t, "service account", spec["serviceAccountName"], "spanprof")
	equal(t, "token mounted", spec["automountServiceAccountToken"], true)
}

// hostMount describes one hostPath volume and how the agent mounts it.
type hostMount struct{ volume, hostPath, mountPath string }

func TestHostPathsAreMountedReadOnly(t *testing.T) {
	r := render(t, "server.yaml")
	spec, c := r.podSpec(t), r.container(t)
	for _, m := range []hostMount{
		{"btf", "/sys/kernel/btf", "/sys/kernel/btf"},
		{"tracefs", "/sys/kernel/tracing", "/sys/kernel/tracing"},
		{"cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup"},
	} {
		equal(t, m.volume+" hostPath", Get(spec, "volumes.name="+m.volume+".hostPath"),
			map[string]interface{}{"path": m.hostPath, "type": "Directory"})
		equal(t, m.volume+" mount", Get(c, "volumeMounts.name="+m.volume),
			map[string]interface{}{"name": m.volume, "mountPath": m.mountPath, "readOnly": true})
	}
	// The only hostPaths are those three: the spool defaults to an emptyDir.
	hostPaths := 0
	for _, v := range Get(spec, "volumes").([]interface{}) {
		if v.(map[string]interface{})["hostPath"] != nil {
			hostPaths++
		}
	}
	equal(t, "hostPath volumes", hostPaths, 3)
	equal(t, "spool volume", Get(spec, "volumes.name=spool.emptyDir"),
		map[string]interface{}{"sizeLimit": "512Mi"})
	equal(t, "spool mount", Get(c, "volumeMounts.name=spool"),
		map[string]interface{}{"name": "spool", "mountPath": "/var/lib/spanprof/spool"})
	equal(t, "config mount", Get(c, "volumeMounts.name=config"), map[string]interface{}{
		"name": "config", "mountPath": "/etc/spanprof/config.yaml", "subPath": "config.yaml",
		"readOnly": true})
	equal(t, "tmp mount", Get(c, "volumeMounts.name=tmp.mountPath"), "/tmp")
}

func TestConfigMapHoldsTheAgentConfiguration(t *testing.T) {
	r := render(t, "server.yaml")
	equal(t, "config.yaml", r.agentConfig(t), map[string]interface{}{
		"server":       "http://pyroscope.observability.svc:4040",
		"frequency":    100,
		"interval":     15,
		"span-scope":   "root",
		"log-level":    "info",
		"log-format":   "logfmt",
		"metrics-addr": "0.0.0.0:9090",
		"spool":        "/var/lib/spanprof/spool",
		"spool-bytes":  "256MiB",
	})
	equal(t, "configmap volume", Get(r.podSpec(t), "volumes.name=config.configMap.name"),
		r.one(t, "ConfigMap").Name())
}

func agentFileKeys(t *testing.T) map[string]bool {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := AgentOptionKeys(root)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestEveryConfigKeyIsAnAgentOption(t *testing.T) {
	known := agentFileKeys(t)
	for _, over := range [][]string{{"server.yaml"}, {"full.yaml"},
		{"server.yaml", "basic-auth-file.yaml"}, {"server.yaml", "bearer-env.yaml"}} {
		for key := range render(t, over...).agentConfig(t) {
			if !known[key] {
				t.Errorf("%v: config.yaml key %q is not an option of the agent", over, key)
			}
		}
	}
}

func TestDefaultResourcesMatchTheMeasuredFootprint(t *testing.T) {
	c := render(t, "server.yaml").container(t)
	equal(t, "resources", c["resources"], map[string]interface{}{
		"requests": map[string]interface{}{"cpu": "50m", "memory": "96Mi"},
		"limits":   map[string]interface{}{"cpu": "500m", "memory": "896Mi"},
	})
}

func TestMetricsPortProbesAndHeadlessService(t *testing.T) {
	r := render(t, "server.yaml")
	c := r.container(t)
	equal(t, "ports", c["ports"], []interface{}{map[string]interface{}{
		"name": "metrics", "containerPort": 9090, "protocol": "TCP"}})
	equal(t, "liveness", Get(c, "livenessProbe.httpGet"),
		map[string]interface{}{"path": "/healthz", "port": "metrics"})
	equal(t, "readiness", Get(c, "readinessProbe.httpGet"),
		map[string]interface{}{"path": "/readyz", "port": "metrics"})
	equal(t, "readiness period", Get(c, "readinessProbe.periodSeconds"), 10)
	svc := r.one(t, "Service")
	equal(t, "clusterIP", Get(svc, "spec.clusterIP"), "None")
	equal(t, "service ports", Get(svc, "spec.ports"), []interface{}{map[string]interface{}{
		"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"}})
	equal(t, "service selector", Get(svc, "spec.selector"),
		Get(r.one(t, "DaemonSet"), "spec.selector.matchLabels"))
	if len(Find(r.objs, "ServiceMonitor")) != 0 {
		t.Error("a ServiceMonitor is rendered by default")
	}
}

func TestMetricsDisabledDropsPortProbesServiceAndAddress(t *testing.T) {
	r := render(t, "server.yaml", "metrics: {enabled: false}")
	c := r.container(t)
	for _, k := range []string{"ports", "livenessProbe", "readinessProbe"} {
		if c[k] != nil {
			t.Errorf("%s rendered with metrics disabled", k)
		}
	}
	if len(Find(r.objs, "Service")) != 0 {
		t.Error("Service rendered with metrics disabled")
	}
	if _, ok := r.agentConfig(t)["metrics-addr"]; ok {
		t.Error("metrics-addr set with metrics disabled")
	}
	if _, err := tryRender(DefaultRelease, "server.yaml",
		"metrics: {enabled: false, serviceMonitor: {enabled: true}}"); err == nil {
		t.Error("a ServiceMonitor without metrics rendered")
	}
}

func TestServiceMonitorWhenEnabled(t *testing.T) {
	r := render(t, "server.yaml",
		"metrics: {serviceMonitor: {enabled: true, labels: {release: prom}}}")
	sm := r.one(t, "ServiceMonitor")
	equal(t, "apiVersion", sm["apiVersion"], "monitoring.coreos.com/v1")
	equal(t, "selector", Get(sm, "spec.selector.matchLabels"),
		Get(r.one(t, "Service"), "spec.selector"))
	equal(t, "namespaces", Get(sm, "spec.namespaceSelector.matchNames"),
		[]interface{}{"observability"})
	equal(t, "endpoint port", Get(sm, "spec.endpoints.0.port"), "metrics")
	equal(t, "endpoint path", Get(sm, "spec.endpoints.0.path"), "/metrics")
	equal(t, "interval", Get(sm, "spec.endpoints.0.interval"), "30s")
	equal(t, "extra label", Get(sm, "metadata.labels.release"), "prom")
}

func TestRBACAllowsOnlyReadingPods(t *testing.T) {
	r := render(t, "server.yaml")
	equal(t, "rules", Get(r.one(t, "ClusterRole"), "rules"), []interface{}{
		map[string]interface{}{
			"apiGroups": []interface{}{""},
			"resources": []interface{}{"pods"},
			"verbs":     []interface{}{"get", "list", "watch"},
		}})
	b := r.one(t, "ClusterRoleBinding")
	equal(t, "roleRef", Get(b, "roleRef"), map[string]interface{}{
		"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "spanprof"})
	equal(t, "subjects", Get(b, "subjects"), []interface{}{map[string]interface{}{
		"kind": "ServiceAccount", "name": "spanprof", "namespace": "observability"}})
	equal(t, "service account", r.one(t, "ServiceAccount").Name(), "spanprof")

	off := render(t, "server.yaml", "rbac: {create: false}\nserviceAccount: {create: false}")
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "ServiceAccount"} {
		if len(Find(off.objs, kind)) != 0 {
			t.Errorf("%s rendered with rbac.create and serviceAccount.create false", kind)
		}
	}
	equal(t, "service account", off.podSpec(t)["serviceAccountName"], "default")
}

func TestConfigChangeRestartsThePods(t *testing.T) {
	sum := func(r *rendering) interface{} {
		return Get(r.one(t, "DaemonSet"), "spec.template.metadata.annotations.checksum/config")
	}
	a, b := render(t, "server.yaml"), render(t, "server.yaml", "config: {frequency: 99}")
	if s, ok := sum(a).(string); !ok || len(s) != 64 {
		t.Fatalf("checksum/config is %v", sum(a))
	}
	if sum(a) == sum(b) {
		t.Error("checksum/config did not change with the configuration")
	}
	if sum(a) != sum(render(t, "server.yaml")) {
		t.Error("checksum/config differs between two identical renders")
	}
}

func TestNotesExplainHowToCheckTheAgentAndSetUpGrafana(t *testing.T) {
	notes := render(t, "server.yaml").files["spanprof/templates/NOTES.txt"]
	for _, want := range []string{
		"kubectl -n observability logs daemonset/spanprof",
		"rollout status daemonset/spanprof",
		"/readyz",
		"/metrics",
		"Traces to profiles",
		"process_cpu:cpu:nanoseconds:cpu:nanoseconds",
		"service.name -> service_name",
		"http://pyroscope.observability.svc:4040",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "<no value>") {
		t.Errorf("NOTES.txt has an unset value:\n%s", notes)
	}
}
