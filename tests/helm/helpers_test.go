// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Test fixtures: the chart loaded once, and a render() that merges override files or inline
// YAML over values.yaml, validates the result against the schema and decodes the objects.
package helmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var chart *Chart

func TestMain(m *testing.M) {
	root, err := RepoRoot()
	if err == nil {
		chart, err = LoadChart(filepath.Join(root, "helm/spanprof"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load chart:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// rendering is one `helm template` run.
type rendering struct {
	values map[string]interface{}
	files  map[string]string
	objs   []Object
}

// overrideValues turns each argument into values: "name.yaml" is a file in testdata/,
// anything else inline YAML.
func overrideValues(overrides []string) ([]map[string]interface{}, error) {
	var out []map[string]interface{}
	for _, o := range overrides {
		var v map[string]interface{}
		var err error
		if strings.HasSuffix(o, ".yaml") && !strings.ContainsAny(o, "\n:") {
			v, err = ReadValuesFile(filepath.Join("testdata", o))
		} else {
			v, err = ParseValues(o)
		}
		if err != nil {
			return nil, fmt.Errorf("override %q: %v", o, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// tryRender validates and renders; the error is the schema's or the templates'.
func tryRender(rel Release, overrides ...string) (*rendering, error) {
	ov, err := overrideValues(overrides)
	if err != nil {
		return nil, err
	}
	r := &rendering{values: chart.Values(ov...)}
	if err := chart.Validate(r.values); err != nil {
		return nil, err
	}
	if r.files, err = chart.Render(rel, r.values); err != nil {
		return nil, err
	}
	if r.objs, err = Decode(r.files); err != nil {
		return nil, err
	}
	return r, nil
}

// render is tryRender for the default release, failing the test on any error.
func render(t *testing.T, overrides ...string) *rendering {
	t.Helper()
	return renderFor(t, DefaultRelease, overrides...)
}

func renderFor(t *testing.T, rel Release, overrides ...string) *rendering {
	t.Helper()
	r, err := tryRender(rel, overrides...)
	if err != nil {
		t.Fatalf("render %v: %v", overrides, err)
	}
	return r
}

// one returns the only object of a kind.
func (r *rendering) one(t *testing.T, kind string) Object {
	t.Helper()
	found := Find(r.objs, kind)
	if len(found) != 1 {
		t.Fatalf("want one %s, rendered %d", kind, len(found))
	}
	return found[0]
}

func (r *rendering) kinds() []string {
	var out []string
	for _, o := range r.objs {
		out = append(out, o.Kind())
	}
	return out
}

func (r *rendering) podSpec(t *testing.T) map[string]interface{} {
	t.Helper()
	spec, ok := Get(r.one(t, "DaemonSet"), "spec.template.spec").(map[string]interface{})
	if !ok {
		t.Fatal("DaemonSet has no pod spec")
	}
	return spec
}

func (r *rendering) container(t *testing.T) map[string]interface{} {
	t.Helper()
	c, ok := Get(r.podSpec(t), "containers.name=spanprof").(map[string]interface{})
	if !ok {
		t.Fatal("DaemonSet has no container named spanprof")
	}
	return c
}

// agentConfig decodes the config.yaml the ConfigMap hands to the agent.
func (r *rendering) agentConfig(t *testing.T) map[string]interface{} {
	t.Helper()
	data, _ := r.one(t, "ConfigMap")["data"].(map[string]interface{})
	text, ok := data["config.yaml"].(string)
	if !ok {
		t.Fatal("ConfigMap has no config.yaml")
	}
	var cfg map[string]interface{}
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("config.yaml: %v\n%s", err, text)
	}
	return cfg
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// equal fails the test when got != want, naming what was compared.
func equal(t *testing.T, what string, got, want interface{}) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}
