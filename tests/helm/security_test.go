// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// The agent's privileges (capabilities, privileged, no_new_privs, seccomp, AppArmor, user) and
// its credentials, which come from an existing Secret and are never written into an object.
package helmtest

import (
	"strings"
	"testing"
)

// baseCapabilities is what the agent needs without CAP_SYS_ADMIN (README.md of the chart).
var baseCapabilities = []string{"BPF", "CHECKPOINT_RESTORE", "DAC_READ_SEARCH", "PERFMON",
	"SYSLOG", "SYS_PTRACE", "SYS_RESOURCE"}

func securityContext(t *testing.T, r *rendering) map[string]interface{} {
	t.Helper()
	sc, ok := r.container(t)["securityContext"].(map[string]interface{})
	if !ok {
		t.Fatal("the agent container has no securityContext")
	}
	return sc
}

func TestDefaultCapabilitiesAreExactlyTheAgentsOnTopOfDropAll(t *testing.T) {
	sc := securityContext(t, render(t, "server.yaml"))
	equal(t, "drop", Strings(sc, "capabilities.drop"), []string{"ALL"})
	equal(t, "add", sorted(Strings(sc, "capabilities.add")),
		sorted(append(append([]string(nil), baseCapabilities...), "SYS_ADMIN")))
	equal(t, "privileged", sc["privileged"], false)
	equal(t, "allowPrivilegeEscalation", sc["allowPrivilegeEscalation"], false)
	equal(t, "runAsUser", sc["runAsUser"], 0)
	equal(t, "runAsNonRoot", sc["runAsNonRoot"], false)
	equal(t, "readOnlyRootFilesystem", sc["readOnlyRootFilesystem"], true)
	equal(t, "seccompProfile", sc["seccompProfile"],
		map[string]interface{}{"type": "RuntimeDefault"})
	equal(t, "appArmorProfile", sc["appArmorProfile"],
		map[string]interface{}{"type": "Unconfined"})
}

func TestWithoutSysAdminTheSetIsTheBaseOne(t *testing.T) {
	sc := securityContext(t, render(t, "server.yaml", "securityContext: {sysAdmin: false}"))
	equal(t, "add", sorted(Strings(sc, "capabilities.add")), baseCapabilities)
	sc = securityContext(t, render(t, "server.yaml",
		"securityContext: {sysAdmin: false, extraCapabilities: [IPC_LOCK, BPF]}"))
	equal(t, "add with extras", sorted(Strings(sc, "capabilities.add")),
		sorted(append(append([]string(nil), baseCapabilities...), "IPC_LOCK")))
}

func TestPrivilegedOnlyWhenAskedFor(t *testing.T) {
	for _, over := range renderings {
		sc := securityContext(t, render(t, over...))
		wantPriv := strings.Contains(strings.Join(over, "\n"), "privileged: true")
		equal(t, "privileged for "+strings.Join(over, "+"), sc["privileged"], wantPriv)
	}
	sc := securityContext(t, render(t, "server.yaml", "securityContext: {privileged: true}"))
	// The API server refuses allowPrivilegeEscalation: false next to privileged: true.
	if sc["allowPrivilegeEscalation"] == false {
		t.Error("privileged with allowPrivilegeEscalation: false")
	}
	if sc["capabilities"] != nil {
		t.Errorf("privileged still lists capabilities %v", sc["capabilities"])
	}
}

func TestNonRootAgentRunsOnFileCapabilitiesWithoutNoNewPrivs(t *testing.T) {
	r := render(t, "server.yaml", "nonroot.yaml")
	sc := securityContext(t, r)
	equal(t, "runAsUser", sc["runAsUser"], 65532)
	equal(t, "runAsNonRoot", sc["runAsNonRoot"], true)
	// no_new_privs would make the kernel ignore the binary's file capabilities.
	equal(t, "allowPrivilegeEscalation", sc["allowPrivilegeEscalation"], true)
	equal(t, "add", sorted(Strings(sc, "capabilities.add")), baseCapabilities)
	equal(t, "fsGroup", Get(r.podSpec(t), "securityContext.fsGroup"), 65532)

	_, err := tryRender(DefaultRelease, "server.yaml", "nonroot.yaml",
		"securityContext: {sysAdmin: true}")
	if err == nil || !strings.Contains(err.Error(), "need runAsUser 0") {
		t.Errorf("sysAdmin for a non-root agent: want a render error, got %v", err)
	}
}

func TestAppArmorIsAnAnnotationBeforeKubernetes130(t *testing.T) {
	old := DefaultRelease
	old.KubeVersion = "v1.29.4"
	r := renderFor(t, old, "server.yaml")
	if _, ok := securityContext(t, r)["appArmorProfile"]; ok {
		t.Error("appArmorProfile field rendered for Kubernetes 1.29")
	}
	ann, _ := Get(r.one(t, "DaemonSet"),
		"spec.template.metadata.annotations").(map[string]interface{})
	equal(t, "AppArmor annotation",
		ann["container.apparmor.security.beta.kubernetes.io/spanprof"], "unconfined")

	r = renderFor(t, old, "server.yaml",
		"securityContext: {appArmorProfile: {type: Localhost, localhostProfile: spanprof}}")
	ann, _ = Get(r.one(t, "DaemonSet"),
		"spec.template.metadata.annotations").(map[string]interface{})
	equal(t, "Localhost annotation",
		ann["container.apparmor.security.beta.kubernetes.io/spanprof"], "localhost/spanprof")

	ann, _ = Get(render(t, "server.yaml").one(t, "DaemonSet"),
		"spec.template.metadata.annotations").(map[string]interface{})
	if _, ok := ann["container.apparmor.security.beta.kubernetes.io/spanprof"]; ok {
		t.Error("AppArmor annotation rendered for Kubernetes 1.31")
	}
}

// secretMaterial fails the test if anything rendered could carry a credential: a Secret
// object, or an environment variable with a literal value for a secret option.
func secretMaterial(t *testing.T, r *rendering) {
	t.Helper()
	if n := len(Find(r.objs, "Secret")); n != 0 {
		t.Errorf("the chart rendered %d Secret objects", n)
	}
	env, _ := r.container(t)["env"].([]interface{})
	for _, e := range env {
		m := e.(map[string]interface{})
		name, _ := m["name"].(string)
		if strings.HasPrefix(name, "SPANPROF_") && m["value"] != nil {
			t.Errorf("%s has a literal value", name)
		}
	}
	cfg := r.agentConfig(t)
	for _, k := range []string{"basic-auth-password", "bearer-token"} {
		if _, ok := cfg[k]; ok {
			t.Errorf("config.yaml holds %s itself", k)
		}
	}
}

func TestBasicAuthPasswordIsAMountedSecretFile(t *testing.T) {
	r := render(t, "server.yaml", "basic-auth-file.yaml")
	secretMaterial(t, r)
	cfg := r.agentConfig(t)
	equal(t, "basic-auth-user", cfg["basic-auth-user"], "123456")
	equal(t, "password file", cfg["basic-auth-password-file"],
		"/etc/spanprof/secrets/basic-auth-password")
	equal(t, "secret volume", Get(r.podSpec(t), "volumes.name=secrets.secret"),
		map[string]interface{}{
			"secretName": "pyroscope-credentials", "defaultMode": 0o440,
			"items": []interface{}{map[string]interface{}{
				"key": "password", "path": "basic-auth-password"}},
		})
	equal(t, "secret mount", Get(r.container(t), "volumeMounts.name=secrets"),
		map[string]interface{}{"name": "secrets", "mountPath": "/etc/spanprof/secrets",
			"readOnly": true})
	if Get(r.container(t), "env.name=SPANPROF_BASIC_AUTH_PASSWORD") != nil {
		t.Error("the password is also passed in the environment")
	}
}

func TestBearerTokenFromSecretKeyRefInEnv(t *testing.T) {
	r := render(t, "server.yaml", "bearer-env.yaml")
	secretMaterial(t, r)
	equal(t, "SPANPROF_BEARER_TOKEN", Get(r.container(t),
		"env.name=SPANPROF_BEARER_TOKEN.valueFrom.secretKeyRef"),
		map[string]interface{}{"name": "pyroscope-token", "key": "token"})
	if _, ok := r.agentConfig(t)["bearer-token-file"]; ok {
		t.Error("bearer-token-file set while the token comes from the environment")
	}
	if Get(r.podSpec(t), "volumes.name=secrets") != nil {
		t.Error("a secret volume is mounted while the token comes from the environment")
	}
}

func TestBasicAuthUserAndPasswordFromTheSecretInEnv(t *testing.T) {
	r := render(t, "server.yaml", `auth:
  existingSecret: grafana-cloud
  basicAuth: {userKey: user, passwordKey: password}
  secretsAs: env`)
	secretMaterial(t, r)
	c := r.container(t)
	equal(t, "user", Get(c, "env.name=SPANPROF_BASIC_AUTH_USER.valueFrom.secretKeyRef"),
		map[string]interface{}{"name": "grafana-cloud", "key": "user"})
	equal(t, "password", Get(c, "env.name=SPANPROF_BASIC_AUTH_PASSWORD.valueFrom.secretKeyRef"),
		map[string]interface{}{"name": "grafana-cloud", "key": "password"})
	if _, ok := r.agentConfig(t)["basic-auth-user"]; ok {
		t.Error("basic-auth-user in config.yaml while it comes from the Secret")
	}
}

func TestInconsistentCredentialsAreRefused(t *testing.T) {
	for _, bad := range []string{
		"auth: {basicAuth: {passwordKey: password}}",
		"auth: {existingSecret: s, bearerTokenKey: t, basicAuth: {passwordKey: p}}",
		"auth: {existingSecret: s, basicAuth: {user: u}}",
		"auth: {existingSecret: s, basicAuth: {user: u, userKey: k, passwordKey: p}}",
		"tls: {caKey: ca.crt}",
		"tls: {existingSecret: s, certKey: tls.crt}",
	} {
		if _, err := tryRender(DefaultRelease, "server.yaml", bad); err == nil {
			t.Errorf("%s: rendered", bad)
		}
	}
}
