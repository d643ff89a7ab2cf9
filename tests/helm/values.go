// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Values as Helm handles them: YAML read into JSON types (every number a float64), user files
// coalesced over the chart's defaults, validated against values.schema.json; and Helm's
// toYaml/fromYaml.
package helmtest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/xeipuuv/gojsonschema"
	yaml2 "gopkg.in/yaml.v2"
	"gopkg.in/yaml.v3"
)

// jsonTypes converts a decoded YAML value to what encoding/json would produce, as Helm does by
// reading values through sigs.k8s.io/yaml: maps with string keys, float64 numbers.
func jsonTypes(v interface{}) (map[string]interface{}, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]interface{}{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ParseValues reads one YAML document of values (an empty one gives an empty map).
func ParseValues(text string) (map[string]interface{}, error) {
	var v map[string]interface{}
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, err
	}
	return jsonTypes(v)
}

func readYAMLFile(path string) (map[string]interface{}, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := ParseValues(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return v, nil
}

// ReadValuesFile reads an override file, as `helm template -f FILE` does.
func ReadValuesFile(path string) (map[string]interface{}, error) { return readYAMLFile(path) }

func deepCopy(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// coalesce lays src over dst as Helm does for -f files: maps merge key by key, anything else
// (lists included) replaces, and a null in src deletes the key.
func coalesce(dst, src map[string]interface{}) {
	for k, sv := range src {
		if sv == nil {
			delete(dst, k)
			continue
		}
		dm, dok := dst[k].(map[string]interface{})
		sm, sok := sv.(map[string]interface{})
		if dok && sok {
			coalesce(dm, sm)
			continue
		}
		dst[k] = deepCopy(sv)
	}
}

// Values merges the overrides, in order, over the chart's defaults.
func (c *Chart) Values(overrides ...map[string]interface{}) map[string]interface{} {
	v := deepCopy(c.Defaults).(map[string]interface{})
	for _, o := range overrides {
		coalesce(v, o)
	}
	return v
}

// Validate checks values against values.schema.json, as helm install/template does before
// rendering. The error lists every violation.
func (c *Chart) Validate(values map[string]interface{}) error {
	if c.Schema == nil {
		return nil
	}
	res, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(c.Schema),
		gojsonschema.NewGoLoader(values))
	if err != nil {
		return fmt.Errorf("values.schema.json: %v", err)
	}
	if res.Valid() {
		return nil
	}
	msgs := make([]string, 0, len(res.Errors()))
	for _, e := range res.Errors() {
		msgs = append(msgs, e.String())
	}
	return fmt.Errorf("values don't meet the specifications of the schema:\n- %s",
		strings.Join(msgs, "\n- "))
}

// toYAML is Helm's toYaml: through JSON (so keys are sorted and numbers print as JSON does)
// to YAML, without the final newline; "" when v cannot be marshalled.
func toYAML(v interface{}) string {
	j, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var generic interface{}
	if err := yaml2.Unmarshal(j, &generic); err != nil {
		return ""
	}
	out, err := yaml2.Marshal(generic)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(out), "\n")
}

// fromYAML is Helm's fromYaml: a map, or a map with an "Error" key.
func fromYAML(s string) map[string]interface{} {
	v, err := ParseValues(s)
	if err != nil {
		return map[string]interface{}{"Error": err.Error()}
	}
	return v
}
