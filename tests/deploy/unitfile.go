// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// A reader for systemd unit files: sections of keys, each key with the values of all its
// assignments in order (systemd's list settings accumulate).
package deploytest

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Unit maps "Section" -> "Key" -> values.
type Unit map[string]map[string][]string

// ParseUnit reads a unit file; it refuses keys outside a section and lines without '='.
func ParseUnit(path string) (Unit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u := Unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case section == "" || !strings.Contains(line, "="):
			return nil, fmt.Errorf("%s:%d: %q outside a section or without '='", path, n, line)
		default:
			kv := strings.SplitN(line, "=", 2)
			key := strings.TrimSpace(kv[0])
			u[section][key] = append(u[section][key], strings.TrimSpace(kv[1]))
		}
	}
	return u, sc.Err()
}

// Get returns the last value of a key ("" when unset), as systemd reads single-value keys.
func (u Unit) Get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// Words returns every word of every assignment of a list key.
func (u Unit) Words(section, key string) []string {
	var out []string
	for _, v := range u[section][key] {
		out = append(out, strings.Fields(v)...)
	}
	return out
}
