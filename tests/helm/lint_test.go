// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// yamllint over what `helm template` would print, for default and non-default values, and
// structural checks every Kubernetes object must pass.
package helmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// yamllint's default rules, with the two that templated manifests cannot meet relaxed: mixed
// sequence indentation (toYaml does not indent lists, hand-written YAML does) and long lines.
const yamllintConfig = `extends: default
rules:
  indentation: {spaces: 2, indent-sequences: whatever}
  line-length: {max: 120}
`

// Hand-written YAML needs no "---" and keeps to the project's 100 columns.
const sourceLintConfig = `extends: default
rules:
  indentation: {spaces: 2, indent-sequences: whatever}
  document-start: disable
  line-length: {max: 100}
`

// renderings are the value sets the lint and structure checks run over.
var renderings = [][]string{
	{"server.yaml"},
	{"full.yaml"},
	{"server.yaml", "basic-auth-file.yaml"},
	{"server.yaml", "bearer-env.yaml"},
	{"server.yaml", "nonroot.yaml"},
	{"server.yaml", "securityContext: {privileged: true}\nmetrics: {enabled: false}"},
}

// manifestsFile writes the manifests of one rendering to dir (kept when $HELM_RENDER_DIR
// names a directory, for reading them by hand).
func manifestsFile(t *testing.T, dir string, i int, r *rendering) string {
	t.Helper()
	if keep := os.Getenv("HELM_RENDER_DIR"); keep != "" {
		dir = keep
	}
	path := filepath.Join(dir, "render-"+string(rune('a'+i))+".yaml")
	if err := os.WriteFile(path, []byte(Manifests(r.files)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRenderedManifestsPassYamllint(t *testing.T) {
	if _, err := exec.LookPath("yamllint"); err != nil {
		t.Skip("yamllint is not installed (Debian package yamllint)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "yamllint.yaml")
	if err := os.WriteFile(cfg, []byte(yamllintConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", "parsable", "-c", cfg}
	for i, over := range renderings {
		args = append(args, manifestsFile(t, dir, i, render(t, over...)))
	}
	out, err := exec.Command("yamllint", args...).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("yamllint (%v):\n%s", err, out)
	}
}

func TestChartValuesAndMetadataPassYamllint(t *testing.T) {
	if _, err := exec.LookPath("yamllint"); err != nil {
		t.Skip("yamllint is not installed (Debian package yamllint)")
	}
	cfg := filepath.Join(t.TempDir(), "yamllint.yaml")
	if err := os.WriteFile(cfg, []byte(sourceLintConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/*.yaml")
	files = append(files, filepath.Join(chart.Dir, "values.yaml"),
		filepath.Join(chart.Dir, "Chart.yaml"))
	out, err := exec.Command("yamllint", append([]string{"-f", "parsable", "-c", cfg},
		files...)...).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("yamllint (%v):\n%s", err, out)
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func TestEveryObjectIsWellFormed(t *testing.T) {
	for _, over := range renderings {
		r := render(t, over...)
		for _, o := range r.objs {
			what := o.Kind() + " " + o.Name()
			if o["apiVersion"] == nil || o.Kind() == "" || !dnsLabel.MatchString(o.Name()) {
				t.Errorf("%v: %s: bad apiVersion, kind or name", over, what)
			}
			labels, _ := Get(o, "metadata.labels").(map[string]interface{})
			for k, v := range labels {
				s, ok := v.(string)
				if !ok || len(s) > 63 || strings.ContainsAny(s, " /:") {
					t.Errorf("%v: %s: label %s=%v is not a valid label value", over, what, k, v)
				}
			}
		}
		for name, text := range r.files {
			if strings.Contains(text, "<no value>") {
				t.Errorf("%v: %s renders an unset value", over, name)
			}
		}
	}
}
