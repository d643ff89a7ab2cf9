// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// values.schema.json: what Helm would refuse before rendering anything.
package helmtest

import (
	"strings"
	"testing"
)

func validate(t *testing.T, overrides ...string) error {
	t.Helper()
	ov, err := overrideValues(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return chart.Validate(chart.Values(ov...))
}

func TestSchemaAcceptsTheDefaultsAndEveryTestFile(t *testing.T) {
	if err := validate(t); err != nil {
		t.Errorf("values.yaml: %v", err)
	}
	for _, over := range renderings {
		if err := validate(t, over...); err != nil {
			t.Errorf("%v: %v", over, err)
		}
	}
}

// Each case is a value of the wrong type or outside what the agent accepts, and the field the
// schema must name.
var schemaRejects = []struct{ values, field string }{
	{"config: {frequency: fast}", "config.frequency"},
	{"config: {frequency: 5000}", "config.frequency"},
	{"config: {frequency: 99.5}", "config.frequency"},
	{"config: {interval: \"15\"}", "config.interval"},
	{"config: {interval: 0}", "config.interval"},
	{"config: {server: pyroscope:4040}", "config.server"},
	{"config: {server: [http://a]}", "config.server"},
	{"config: {spanScope: some}", "config.spanScope"},
	{"config: {logLevel: trace}", "config.logLevel"},
	{"config: {logFormat: xml}", "config.logFormat"},
	{"config: {labels: [cluster=prod]}", "config.labels"},
	{"config: {labels: {service_name: x}}", "config.labels"},
	{"config: {labels: {__name__: x}}", "config.labels"},
	{"config: {labels: {\"a,b\": x}}", "config.labels"},
	{"config: {labels: {service.name: x}}", "config.labels"},
	{"config: {traceIdLabel: \"yes\"}", "config.traceIdLabel"},
	{"config: {extra: {trace-id-label: true}}", "config.extra"},
	{"config: {labels: {replicas: 3}}", "config.labels.replicas"},
	{"config: {headers: \"X-A: b\"}", "config.headers"},
	{"config: {headers: [\"no colon\"]}", "config.headers.0"},
	{"config: {headers: [\"Content-Type: text/plain\"]}", "config.headers.0"},
	{"config: {tenant: \"a b\"}", "config.tenant"},
	{"config: {queueBytes: 64MB}", "config.queueBytes"},
	{"config: {connectTimeout: 5s}", "config.connectTimeout"},
	{"config: {connectTimeout: 301}", "config.connectTimeout"},
	{"config: {spool: {enabled: \"yes\"}}", "config.spool.enabled"},
	{"config: {spool: {hostPath: var/spool}}", "config.spool.hostPath"},
	{"config: {extra: {server: http://x}}", "config.extra"},
	{"config: {serverr: http://x}", "config"},
	{"auth: {password: hunter2}", "auth"},
	{"auth: {secretsAs: inline}", "auth.secretsAs"},
	{"auth: {basicAuth: {user: \"a:b\"}}", "auth.basicAuth.user"},
	{"tls: {insecureSkipVerify: \"true\"}", "tls.insecureSkipVerify"},
	{"metrics: {port: \"9090\"}", "metrics.port"},
	{"metrics: {port: 70000}", "metrics.port"},
	{"metrics: {enabled: 1}", "metrics.enabled"},
	{"metrics: {serviceMonitor: {interval: 30}}", "metrics.serviceMonitor.interval"},
	{"resources: [cpu]", "resources"},
	{"resources: {requests: {cpu: [1]}}", "resources.requests.cpu"},
	{"securityContext: {privileged: \"yes\"}", "securityContext.privileged"},
	{"securityContext: {sysAdmin: 1}", "securityContext.sysAdmin"},
	{"securityContext: {runAsUser: -1}", "securityContext.runAsUser"},
	{"securityContext: {extraCapabilities: SYS_ADMIN}", "securityContext.extraCapabilities"},
	{"securityContext: {extraCapabilities: [cap_sys_admin]}", "securityContext.extraCapabilities.0"},
	{"securityContext: {seccompProfile: {type: Default}}", "securityContext.seccompProfile.type"},
	{"securityContext: {appArmorProfile: unconfined}", "securityContext.appArmorProfile"},
	{"tolerations: {operator: Exists}", "tolerations"},
	{"nodeSelector: [linux]", "nodeSelector"},
	{"nodeSelector: {gpu: true}", "nodeSelector.gpu"},
	{"affinity: []", "affinity"},
	{"priorityClassName: 1000", "priorityClassName"},
	{"extraArgs: --verbose", "extraArgs"},
	{"extraEnv: [{value: x}]", "extraEnv.0"},
	{"image: {tag: 1}", "image.tag"},
	{"image: {pullPolicy: always}", "image.pullPolicy"},
	{"serviceAccount: {create: \"false\"}", "serviceAccount.create"},
	{"rbac: {create: null, enabled: true}", "rbac"},
	{"podAnnotations: {a: 1}", "podAnnotations.a"},
	{"terminationGracePeriodSeconds: 30s", "terminationGracePeriodSeconds"},
	{"livenessProbe: {periodSeconds: 0}", "livenessProbe.periodSeconds"},
	{"hostNetwork: true", "(root)"},
}

func TestSchemaRejectsWrongTypesAndValues(t *testing.T) {
	for _, c := range schemaRejects {
		err := validate(t, "server.yaml", c.values)
		if err == nil {
			t.Errorf("%s: accepted", c.values)
			continue
		}
		if !strings.Contains(err.Error(), "- "+c.field+":") &&
			!strings.Contains(err.Error(), "- "+c.field+" ") {
			t.Errorf("%s: the error does not name %s:\n%v", c.values, c.field, err)
		}
	}
}

func TestSchemaRejectionStopsRendering(t *testing.T) {
	_, err := tryRender(DefaultRelease, "server.yaml", "securityContext: {privileged: \"yes\"}")
	if err == nil || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("want a schema error, got %v", err)
	}
}
