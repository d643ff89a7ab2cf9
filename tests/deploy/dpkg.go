// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// The shared libraries a binary loads (ldd, and its own DT_NEEDED entries), the Debian package
// that ships each one (dpkg -S), and what `apt-get install --no-install-recommends` of some
// packages pulls in (their Pre-Depends/Depends closure, from this machine's dpkg database).
package deploytest

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strings"
)

// Library is one line of ldd's output.
type Library struct {
	Soname string // libcurl.so.4
	Path   string // resolved path; "" for the vDSO
}

var lddLine = regexp.MustCompile(`^\s*(\S+)(?:\s+=>\s+(\S+))?\s+\(0x[0-9a-f]+\)`)

// Ldd lists every library the dynamic loader maps for bin, dependencies of dependencies too.
func Ldd(bin string) ([]Library, error) {
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %v\n%s", bin, err, out)
	}
	var libs []Library
	for _, line := range strings.Split(string(out), "\n") {
		m := lddLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		lib := Library{Soname: m[1], Path: m[2]}
		if strings.HasPrefix(m[1], "/") { // the loader itself: "/lib64/ld-linux-x86-64.so.2 (0x..)"
			lib.Path = m[1]
		}
		if strings.Contains(line, "not found") {
			return nil, fmt.Errorf("ldd %s: %s", bin, strings.TrimSpace(line))
		}
		libs = append(libs, lib)
	}
	return libs, nil
}

// Needed is bin's own DT_NEEDED list: the libraries it links directly.
func Needed(bin string) ([]string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ImportedLibraries()
}

// usrMergeTwin maps /lib/... to /usr/lib/... and back: on a merged-/usr system ldd may name a
// library by the path dpkg did not record.
func usrMergeTwin(path string) string {
	if strings.HasPrefix(path, "/usr/") {
		return strings.TrimPrefix(path, "/usr")
	}
	return "/usr" + path
}

// PackagesOf maps each path to the Debian package shipping it (without the :arch suffix),
// asking dpkg -S once for all of them; a path no package ships is left out.
func PackagesOf(paths []string) map[string]string {
	var query []string
	for _, p := range paths {
		query = append(query, p, usrMergeTwin(p))
	}
	// dpkg -S exits 1 when some path is unknown (every twin is); the rest is still printed.
	out, _ := exec.Command("dpkg", append([]string{"-S"}, query...)...).Output()
	shipped := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, ": ", 2)
		if len(f) != 2 {
			continue
		}
		pkg := strings.SplitN(strings.SplitN(f[0], ",", 2)[0], ":", 2)[0]
		shipped[strings.TrimSpace(f[1])] = strings.TrimSpace(pkg)
	}
	found := map[string]string{}
	for _, p := range paths {
		if pkg, ok := shipped[p]; ok {
			found[p] = pkg
		} else if pkg, ok := shipped[usrMergeTwin(p)]; ok {
			found[p] = pkg
		}
	}
	return found
}

// installedDepends reads, in one dpkg-query, every installed package's Pre-Depends and
// Depends fields.
func installedDepends() (map[string]string, error) {
	out, err := exec.Command("dpkg-query", "-W",
		"-f=${Package}\t${db:Status-Abbrev}\t${Pre-Depends}, ${Depends}\n").Output()
	if err != nil {
		return nil, fmt.Errorf("dpkg-query: %v", err)
	}
	db := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) == 3 && strings.HasPrefix(f[1], "ii") {
			db[f[0]] = f[2]
		}
	}
	return db, nil
}

// Closure is the set of packages `apt-get install --no-install-recommends pkgs` brings in,
// pkgs included, judged from the packages installed here: of alternatives "a | b" the first
// installed one is taken. Every package must be installed here.
func Closure(pkgs []string) (map[string]bool, error) {
	db, err := installedDepends()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	todo := append([]string(nil), pkgs...)
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[p] {
			continue
		}
		fields, ok := db[p]
		if !ok {
			return nil, fmt.Errorf("%s is not installed here: cannot follow its dependencies", p)
		}
		seen[p] = true
		for _, clause := range strings.Split(fields, ",") {
			for _, alt := range strings.Split(clause, "|") {
				name := strings.Fields(alt)
				if len(name) == 0 {
					continue
				}
				n := strings.SplitN(name[0], ":", 2)[0]
				if _, ok := db[n]; ok {
					todo = append(todo, n)
					break
				}
			}
		}
	}
	return seen, nil
}

// Keys returns a set's members in order.
func Keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
