// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// deploy/systemd: the unit's required settings and capabilities, systemd-analyze verify and
// its exposure score, the settings file, and what `make install` does with both.
package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	helmtest "github.com/spanprof/spanprof/tests/helm"
)

func unit(t *testing.T) Unit {
	t.Helper()
	u, err := ParseUnit(filepath.Join(root, "deploy/systemd/spanprof.service"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestUnitHasTheRequiredSettings(t *testing.T) {
	u := unit(t)
	for _, kv := range [][3]string{
		{"Service", "ProtectSystem", "strict"},
		{"Service", "NoNewPrivileges", "yes"},
		{"Service", "Restart", "on-failure"},
		{"Service", "EnvironmentFile", "-/etc/default/spanprof"},
		{"Service", "ExecStart", "/usr/local/bin/spanprof $SPANPROF_ARGS"},
		{"Service", "StateDirectory", "spanprof"},
		{"Service", "WorkingDirectory", "/var/lib/spanprof"},
		{"Service", "DynamicUser", "yes"},
		{"Install", "WantedBy", "multi-user.target"},
	} {
		if got := u.Get(kv[0], kv[1]); got != kv[2] {
			t.Errorf("[%s] %s=%q, want %q", kv[0], kv[1], got, kv[2])
		}
	}
	// Each of these would break the agent: hidden processes, no /proc/kallsyms, no CAP_SYSLOG.
	for _, key := range []string{"ProtectProc", "ProcSubset", "ProtectKernelLogs", "User"} {
		if v := u.Get("Service", key); v != "" {
			t.Errorf("%s=%s is set", key, v)
		}
	}
}

func TestUnitCapabilitiesAreTheChartsDefaultSet(t *testing.T) {
	u := unit(t)
	var want []string
	for _, c := range chartCapabilities(t, "") {
		want = append(want, "CAP_"+c)
	}
	for _, key := range []string{"CapabilityBoundingSet", "AmbientCapabilities"} {
		got := u.Words("Service", key)
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s=%v, want %v", key, got, want)
		}
	}
}

// verifiableUnit writes a copy of the unit whose ExecStart= is the built agent, because
// systemd-analyze verify checks that the command exists.
func verifiableUnit(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, "deploy/systemd/spanprof.service"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(text), "/usr/local/bin/spanprof", agentBinary(t))
	path := filepath.Join(t.TempDir(), "spanprof.service")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUnitPassesSystemdAnalyzeVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("no systemd-analyze; TestUnitHasTheRequiredSettings still checked the keys")
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no",
		verifiableUnit(t)).CombinedOutput()
	// Unknown keys and bad values are only warnings: any output is a failure here.
	if err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify (%v):\n%s", err, out)
	}
}

// maxExposure is the highest `systemd-analyze security` score accepted (0 safest, 10 worst);
// the unit scores 3.1 with systemd 252, what the agent's capabilities leave room for.
const maxExposure = 4.0

func TestUnitExposureStaysLow(t *testing.T) {
	out, err := exec.Command("systemd-analyze", "security", "--offline=yes", "--no-pager",
		verifiableUnit(t)).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Skipf("systemd-analyze security --offline is not available: %v", err)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	if score > maxExposure {
		t.Errorf("exposure %.1f > %.1f:\n%s", score, maxExposure, out)
	}
}

var envLine = regexp.MustCompile(`^#?(SPANPROF_[A-Z0-9_]+)=(.*)$`)

func TestSettingsFileNamesOnlyAgentOptions(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, "deploy/systemd/spanprof.env"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := helmtest.AgentOptionKeys(root)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"SPANPROF_ARGS": true}
	for k := range keys {
		known["SPANPROF_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))] = true
	}
	found := 0
	for _, line := range strings.Split(string(text), "\n") {
		m := envLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		found++
		if !known[m[1]] {
			t.Errorf("%s is not an agent option", m[1])
		}
		secret := strings.HasSuffix(m[1], "_PASSWORD") || strings.HasSuffix(m[1], "_TOKEN")
		if secret && !strings.HasPrefix(line, "#") {
			t.Errorf("the shipped settings set %s", m[1])
		}
	}
	if found < 10 {
		t.Errorf("only %d settings documented", found)
	}
}

// makeInstall runs the real install target into dest, without rebuilding `all`.
func makeInstall(t *testing.T, dest, prefix string) {
	t.Helper()
	cmd := exec.Command("make", "-s", "-C", root, "-o", "all", "install",
		"DESTDIR="+dest, "prefix="+prefix)
	// Not the jobserver of a `make test` this runs under.
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MAKEFLAGS=") && !strings.HasPrefix(e, "MFLAGS=") &&
			!strings.HasPrefix(e, "MAKELEVEL=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
}

func TestMakeInstallPlacesTheUnitAndKeepsExistingSettings(t *testing.T) {
	agentBinary(t)
	dest := t.TempDir()
	makeInstall(t, dest, "/opt/spanprof")
	u, err := ParseUnit(filepath.Join(dest, "opt/spanprof/lib/systemd/system/spanprof.service"))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Get("Service", "ExecStart"); got != "/opt/spanprof/bin/spanprof $SPANPROF_ARGS" {
		t.Errorf("installed ExecStart=%s", got)
	}
	env := filepath.Join(dest, "etc/default/spanprof")
	st, err := os.Stat(env)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o, want 600 (it may hold a password)", env, st.Mode().Perm())
	}
	mine := []byte("SPANPROF_SERVER=http://mine:4040\n")
	if err := os.WriteFile(env, mine, 0o600); err != nil {
		t.Fatal(err)
	}
	makeInstall(t, dest, "/opt/spanprof")
	if got, _ := os.ReadFile(env); string(got) != string(mine) {
		t.Errorf("a second make install replaced the settings:\n%s", got)
	}
}
