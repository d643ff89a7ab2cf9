// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Decoding rendered manifests into Kubernetes objects and reading fields out of them.
package helmtest

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Object is one decoded Kubernetes object.
type Object map[string]interface{}

// Kind and Name identify an object in messages and lookups.
func (o Object) Kind() string { s, _ := o["kind"].(string); return s }
func (o Object) Name() string { s, _ := Get(o, "metadata.name").(string); return s }

// Decode parses every YAML document of every rendered .yaml file; an empty document is skipped,
// as Helm does. The objects come back sorted by kind, then name.
func Decode(rendered map[string]string) ([]Object, error) {
	var objs []Object
	for name, text := range rendered {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var o map[string]interface{}
			err := dec.Decode(&o)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %v\n%s", name, err, text)
			}
			if o != nil {
				objs = append(objs, Object(o))
			}
		}
	}
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].Kind() != objs[j].Kind() {
			return objs[i].Kind() < objs[j].Kind()
		}
		return objs[i].Name() < objs[j].Name()
	})
	return objs, nil
}

// Get follows a dotted path through maps; a numeric element indexes a list, and "name=x"
// picks the list element whose name is x. Missing fields give nil.
func Get(v interface{}, path string) interface{} {
	for _, part := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]interface{}:
			v = t[part]
		case Object:
			v = t[part]
		case []interface{}:
			v = nil
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(t) {
				v = t[i]
			} else if strings.HasPrefix(part, "name=") {
				for _, e := range t {
					if m, ok := e.(map[string]interface{}); ok && m["name"] == part[5:] {
						v = m
					}
				}
			}
		default:
			return nil
		}
	}
	return v
}

// Strings returns a list of strings at path (nil when it is not one).
func Strings(v interface{}, path string) []string {
	list, ok := Get(v, path).([]interface{})
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// Find returns the objects of a kind.
func Find(objs []Object, kind string) []Object {
	var out []Object
	for _, o := range objs {
		if o.Kind() == kind {
			out = append(out, o)
		}
	}
	return out
}
