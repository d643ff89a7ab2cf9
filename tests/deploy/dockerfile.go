// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package deploytest checks the deployment files no engine runs here: the Dockerfile (which
// packages its stages install, the file capabilities it sets) against the built binary, and
// the systemd unit. This file reads a Dockerfile into stages.
package deploytest

import (
	"bufio"
	"os"
	"regexp"
	"strings"
)

// Stage is one FROM ... section of a Dockerfile.
type Stage struct {
	From string   // the base image
	Name string   // the AS name, "" for none
	Runs []string // RUN instructions, continuation lines joined
	User string   // the last USER instruction
	// COPY instructions' arguments, and the ENTRYPOINT as written
	Copies     []string
	Entrypoint string
}

// ParseDockerfile reads the stages of a Dockerfile; comments are dropped and lines ending in a
// backslash are joined to the next.
func ParseDockerfile(path string) ([]Stage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var stages []Stage
	var insn strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && insn.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			insn.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		insn.WriteString(line)
		stages = addInstruction(stages, insn.String())
		insn.Reset()
	}
	return stages, sc.Err()
}

func addInstruction(stages []Stage, insn string) []Stage {
	fields := strings.Fields(insn)
	if len(fields) < 2 {
		return stages
	}
	op := strings.ToUpper(fields[0])
	args := strings.TrimSpace(insn[len(fields[0]):])
	if op == "FROM" {
		s := Stage{From: fields[1]}
		if len(fields) >= 4 && strings.EqualFold(fields[2], "AS") {
			s.Name = fields[3]
		}
		return append(stages, s)
	}
	if len(stages) == 0 {
		return stages // ARG before the first FROM
	}
	last := &stages[len(stages)-1]
	switch op {
	case "RUN":
		last.Runs = append(last.Runs, args)
	case "USER":
		last.User = args
	case "COPY":
		last.Copies = append(last.Copies, args)
	case "ENTRYPOINT":
		last.Entrypoint = args
	}
	return stages
}

// AptInstalls lists the packages the stage's `apt-get install` commands name.
func (s Stage) AptInstalls() []string {
	var pkgs []string
	for _, run := range s.Runs {
		for _, cmd := range regexp.MustCompile(`&&|;|\|\|`).Split(run, -1) {
			f := strings.Fields(cmd)
			if len(f) < 2 || f[0] != "apt-get" {
				continue
			}
			install := false
			for _, w := range f[1:] {
				switch {
				case w == "install":
					install = true
				case install && !strings.HasPrefix(w, "-"):
					pkgs = append(pkgs, w)
				}
			}
		}
	}
	return pkgs
}

// SetcapCapabilities returns the capabilities a `setcap caps+ep FILE` of the stage grants to
// FILE, upper-cased without the CAP_ prefix, and the flags ("ep").
func (s Stage) SetcapCapabilities(file string) (caps []string, flags string) {
	re := regexp.MustCompile(`setcap\s+(\S+)([+=])([eip]+)\s+` + regexp.QuoteMeta(file) + `\b`)
	for _, run := range s.Runs {
		m := re.FindStringSubmatch(run)
		if m == nil {
			continue
		}
		for _, c := range strings.Split(m[1], ",") {
			caps = append(caps, strings.ToUpper(strings.TrimPrefix(c, "cap_")))
		}
		return caps, m[3]
	}
	return nil, ""
}
