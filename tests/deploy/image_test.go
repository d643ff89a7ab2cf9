// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// The Dockerfile, checked without an engine: its runtime stage installs the package of every
// library `ldd build/spanprof` lists, its build stage the -dev package of every pkg-config
// module and tool the Makefile uses, and the binary's file capabilities are the chart's set.
package deploytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	helmtest "github.com/spanprof/spanprof/tests/helm"
)

var root string

func TestMain(m *testing.M) {
	var err error
	if root, err = helmtest.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func stages(t *testing.T) (build, runtime Stage) {
	t.Helper()
	st, err := ParseDockerfile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 {
		t.Fatalf("want a build and a runtime stage, found %d", len(st))
	}
	return st[0], st[1]
}

func agentBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(root, "build/spanprof")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: run make first", err)
	}
	return bin
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestStagesBuildOnBookwormAndRunOnSlimAsNonRoot(t *testing.T) {
	build, runtime := stages(t)
	if build.From != "debian:bookworm" || build.Name != "build" {
		t.Errorf("build stage: FROM %s AS %s", build.From, build.Name)
	}
	if runtime.From != "debian:bookworm-slim" {
		t.Errorf("runtime stage: FROM %s", runtime.From)
	}
	if runtime.User != "65532:65532" {
		t.Errorf("runtime USER %q, want the non-root 65532:65532", runtime.User)
	}
	if !contains(runtime.Copies, "--from=build /src/build/spanprof /usr/bin/spanprof") {
		t.Errorf("the binary is not copied from the build stage: %v", runtime.Copies)
	}
	if runtime.Entrypoint != `["/usr/bin/spanprof"]` {
		t.Errorf("ENTRYPOINT %s", runtime.Entrypoint)
	}
}

// libc6 ships libc, libm, libresolv and the loader: they come with the base image.
const baseImagePackage = "libc6"

func TestRuntimeStageInstallsEveryLibraryTheAgentLoads(t *testing.T) {
	bin := agentBinary(t)
	_, runtime := stages(t)
	install := runtime.AptInstalls()
	libs, err := Ldd(bin)
	if err != nil {
		t.Fatal(err)
	}
	needed, err := Needed(bin)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range libs {
		if l.Path != "" {
			paths = append(paths, l.Path)
		}
	}
	pkgOf := PackagesOf(paths)
	pulled, err := Closure(append([]string{baseImagePackage}, install...))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, l := range libs {
		if l.Path == "" {
			continue // the vDSO
		}
		pkg, ok := pkgOf[l.Path]
		switch {
		case !ok:
			t.Errorf("%s (%s): no Debian package ships it", l.Soname, l.Path)
		case pkg == baseImagePackage:
		case contains(needed, l.Soname) && !contains(install, pkg):
			// A library the agent links directly is named, not left to chance.
			t.Errorf("%s is linked directly but its package %s is not in the runtime "+
				"stage's apt-get install", l.Soname, pkg)
		case !pulled[pkg]:
			t.Errorf("%s: package %s is neither installed nor pulled in by %v",
				l.Soname, pkg, install)
		}
		checked++
	}
	if checked < len(needed) {
		t.Errorf("checked %d libraries, fewer than the %d the agent links", checked, len(needed))
	}
}

func TestRuntimePackagesExistInBookworm(t *testing.T) {
	_, runtime := stages(t)
	build, _ := stages(t)
	if _, err := exec.LookPath("apt-cache"); err != nil {
		t.Skip("no apt-cache")
	}
	for _, pkgs := range [][]string{runtime.AptInstalls(), build.AptInstalls()} {
		args := append([]string{"show", "--no-all-versions"}, pkgs...)
		if out, err := exec.Command("apt-cache", args...).CombinedOutput(); err != nil {
			t.Errorf("apt-cache show %v: %v\n%s", pkgs, err, lastLines(string(out), 3))
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// makefileList reads a `NAME := words` or `NAME ?= word` assignment of the Makefile.
func makefileList(t *testing.T, name string) []string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*[:?]?=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatalf("Makefile has no %s", name)
	}
	return strings.Fields(string(m[1]))
}

func TestBuildStageInstallsWhatTheMakefileUses(t *testing.T) {
	build, _ := stages(t)
	install := build.AptInstalls()
	var paths []string
	for _, mod := range makefileList(t, "PKGS") {
		out, err := exec.Command("pkg-config", "--path", mod).Output()
		if err != nil {
			t.Errorf("pkg-config --path %s: %v", mod, err)
			continue
		}
		paths = append(paths, strings.TrimSpace(string(out)))
	}
	for _, tool := range []string{"CLANG", "BPFTOOL", "LLVM_STRIP", "PROTOC_C"} {
		path, err := exec.LookPath(makefileList(t, tool)[0])
		if err != nil {
			t.Errorf("%s: %v", tool, err)
			continue
		}
		paths = append(paths, path)
	}
	for _, tool := range []string{"gcc", "make", "pkg-config"} {
		if path, err := exec.LookPath(tool); err == nil {
			paths = append(paths, path)
		}
	}
	pkgOf := PackagesOf(paths)
	pulled, err := Closure(install)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		pkg, ok := pkgOf[p]
		if !ok {
			t.Errorf("%s: no Debian package ships it", p)
		} else if !pulled[pkg] {
			t.Errorf("%s comes from %s, which the build stage does not install", p, pkg)
		}
	}
}

func TestFileCapabilitiesAreTheChartsSetWithoutSysAdmin(t *testing.T) {
	_, runtime := stages(t)
	caps, flags := runtime.SetcapCapabilities("/usr/bin/spanprof")
	if flags != "ep" {
		t.Errorf("setcap flags %q, want ep (the agent does not raise capabilities itself)", flags)
	}
	want := chartCapabilities(t, "securityContext: {sysAdmin: false}")
	sort.Strings(caps)
	if strings.Join(caps, " ") != strings.Join(want, " ") {
		t.Errorf("file capabilities %v, the chart adds %v: a file capability missing from the "+
			"bounding set makes exec fail", caps, want)
	}
}

// chartCapabilities renders the chart and returns the capabilities it adds, sorted.
func chartCapabilities(t *testing.T, override string) []string {
	t.Helper()
	c, err := helmtest.LoadChart(filepath.Join(root, "helm/spanprof"))
	if err != nil {
		t.Fatal(err)
	}
	ov, err := helmtest.ParseValues("config: {server: http://p:4040}\n" + override)
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.Render(helmtest.DefaultRelease, c.Values(ov))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := helmtest.Decode(files)
	if err != nil {
		t.Fatal(err)
	}
	ds := helmtest.Find(objs, "DaemonSet")
	if len(ds) != 1 {
		t.Fatalf("%d DaemonSets", len(ds))
	}
	caps := helmtest.Strings(ds[0],
		"spec.template.spec.containers.name=spanprof.securityContext.capabilities.add")
	sort.Strings(caps)
	return caps
}

func TestDockerignoreKeepsTheSourcesAndDropsBuildOutput(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignored := func(path string) bool {
		for _, line := range strings.Split(string(text), "\n") {
			pat := strings.TrimSpace(line)
			if pat == "" || strings.HasPrefix(pat, "#") {
				continue
			}
			if ok, _ := filepath.Match(pat, path); ok {
				return true
			}
		}
		return false
	}
	for _, need := range []string{"Makefile", "user", "bpf", "include", "vmlinux", "hooks"} {
		if ignored(need) {
			t.Errorf(".dockerignore drops %s, which the image build needs", need)
		}
	}
	for _, drop := range []string{"build", ".git", "spanprof-data"} {
		if !ignored(drop) {
			t.Errorf(".dockerignore keeps %s in the build context", drop)
		}
	}
}
