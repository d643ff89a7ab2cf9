// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// The agent's own option names, read from its option table, so the chart and the systemd
// settings can only use options the agent has.
package helmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// One entry of the table, in designated-initializer form: `[CONFIG_OPT_X] = { .name = "flag",`
// then, for lists, `.key = "plural",`.
var optionEntry = regexp.MustCompile(
	`\[CONFIG_OPT_\w+\]\s*=\s*\{\s*\.name\s*=\s*"([a-z-]+)",\s*(?:\.key\s*=\s*"([a-z-]+)")?`)

// AgentOptionKeys returns the keys of the agent's options as its config file and environment
// name them (the key when the table gives one, e.g. "labels", else the flag name), from
// user/config/config_options.c under root.
func AgentOptionKeys(root string) (map[string]bool, error) {
	src, err := os.ReadFile(filepath.Join(root, "user/config/config_options.c"))
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, m := range optionEntry.FindAllStringSubmatch(string(src), -1) {
		if m[2] != "" {
			keys[m[2]] = true
		} else {
			keys[m[1]] = true
		}
	}
	if len(keys) < 10 {
		return nil, fmt.Errorf("found only %d options in user/config/config_options.c", len(keys))
	}
	return keys, nil
}
