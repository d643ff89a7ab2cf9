// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package helmtest renders a Helm chart the way `helm template` does, for the subset of Helm
// that helm/spanprof uses, so the chart can be checked where Helm itself cannot be installed:
// Go's text/template with sprig's functions, Helm's include/tpl/required/toYaml/fromYaml, and
// the .Values/.Release/.Chart/.Capabilities/.Template objects.
package helmtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
)

// Chart is a chart directory loaded from disk.
type Chart struct {
	Dir       string
	Meta      map[string]interface{} // Chart.yaml
	Defaults  map[string]interface{} // values.yaml, with Helm's JSON number types
	Schema    []byte                 // values.schema.json, nil when absent
	templates map[string]string      // "<chart>/templates/<file>" -> source
}

// Release describes the install being rendered.
type Release struct {
	Name        string
	Namespace   string
	KubeVersion string // e.g. "v1.31.0"; Helm takes it from the cluster
}

// DefaultRelease is what the tests render unless they say otherwise.
var DefaultRelease = Release{Name: "spanprof", Namespace: "observability", KubeVersion: "v1.31.0"}

// LoadChart reads Chart.yaml, values.yaml, values.schema.json and templates/ from dir.
func LoadChart(dir string) (*Chart, error) {
	c := &Chart{Dir: dir, templates: map[string]string{}}
	var err error
	if c.Meta, err = readYAMLFile(filepath.Join(dir, "Chart.yaml")); err != nil {
		return nil, err
	}
	if c.Defaults, err = readYAMLFile(filepath.Join(dir, "values.yaml")); err != nil {
		return nil, err
	}
	c.Schema, err = os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	name, _ := c.Meta["name"].(string)
	if name == "" {
		return nil, fmt.Errorf("%s/Chart.yaml: no name", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "templates", "*"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c.templates[name+"/templates/"+filepath.Base(f)] = string(text)
	}
	return c, nil
}

// Name is the chart's name from Chart.yaml.
func (c *Chart) Name() string { return c.Meta["name"].(string) }

// chartObject is .Chart: Chart.yaml's keys with the first letter upper-cased, as Helm's
// Metadata struct exposes them (.Chart.Name, .Chart.AppVersion).
func (c *Chart) chartObject() map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range c.Meta {
		out[strings.ToUpper(k[:1])+k[1:]] = v
	}
	return out
}

func capabilities(kubeVersion string) map[string]interface{} {
	v := strings.TrimPrefix(kubeVersion, "v")
	parts := strings.SplitN(v, ".", 3)
	for len(parts) < 2 {
		parts = append(parts, "0")
	}
	return map[string]interface{}{
		"KubeVersion": map[string]interface{}{
			"Version": "v" + v, "GitVersion": "v" + v, "Major": parts[0], "Minor": parts[1],
		},
		"HelmVersion": map[string]interface{}{"Version": "v3.14.0"},
	}
}

// funcMap is sprig's text functions without env/expandenv (as in Helm), plus Helm's own.
// include and tpl need the template set, which they reach through *root once it is built.
func funcMap(root **template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return nil, fmt.Errorf("%s", msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := (*root).ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := (*root).Clone()
		if err != nil {
			return "", err
		}
		if t, err = t.New("tpl").Parse(text); err != nil {
			return "", fmt.Errorf("tpl %q: %v", text, err)
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	return f
}

// Render executes every template of the chart with values (already merged, see Values) and
// returns the output of each non-partial file, keyed by its template name. NOTES.txt is
// rendered too; Manifests leaves it out.
func (c *Chart) Render(rel Release, values map[string]interface{}) (map[string]string, error) {
	var root *template.Template
	root = template.New(c.Name()).Funcs(funcMap(&root)).Option("missingkey=zero")
	names := make([]string, 0, len(c.templates))
	for name := range c.templates {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := root.New(name).Parse(c.templates[name]); err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "_") {
			continue
		}
		top := map[string]interface{}{
			"Values":       values,
			"Chart":        c.chartObject(),
			"Capabilities": capabilities(rel.KubeVersion),
			"Release": map[string]interface{}{
				"Name": rel.Name, "Namespace": rel.Namespace, "Service": "Helm",
				"IsInstall": true, "IsUpgrade": false, "Revision": 1,
			},
			"Template": map[string]interface{}{
				"Name": name, "BasePath": c.Name() + "/templates",
			},
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, err
		}
		out[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// Manifests joins the rendered YAML files as `helm template` prints them: each non-empty one
// after a "---" and a "# Source:" comment, in name order.
func Manifests(rendered map[string]string) string {
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(rendered[name]) != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, strings.TrimRight(rendered[name], "\n"))
	}
	return b.String()
}

// RepoRoot is $SPANPROF_ROOT (set by the Makefile) or the first parent of the working
// directory holding helm/spanprof.
func RepoRoot() (string, error) {
	if root := os.Getenv("SPANPROF_ROOT"); root != "" {
		return root, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "helm/spanprof/Chart.yaml")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no helm/spanprof above the working directory; set SPANPROF_ROOT")
}
