/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the agent needs to know about a Go executable's runtime: its Go version (from
 * .go.buildinfo) and where runtime.g keeps the goroutine's pprof labels in that version. */
#ifndef SPANPROF_GO_RUNTIME_H
#define SPANPROF_GO_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* Same values as enum spanprof_go_labels (include/spanprof_abi.h). */
#define GO_LABELS_NONE 0
#define GO_LABELS_MAP 1
#define GO_LABELS_SLICE 2

struct go_labels_layout {
	uint32_t offset; /* of labels in runtime.g; 0 when unknown */
	uint32_t kind; /* GO_LABELS_* */
	uint32_t m_offset, curg_offset; /* of g.m and m.curg; 0 when unknown */
	uint32_t goid_offset; /* of g.goid: tells a goroutine from a later one on the same g */
};

/* Copies the Go version ("go1.19.8") recorded in the ELF's .go.buildinfo (Go 1.18+ format)
 * into buf (NUL-terminated). Returns 0, -ENODATA when there is no build info, -ENOTSUP for
 * the pre-1.18 format, -ENOEXEC when it is malformed, -ENOSPC when buf is too small, -EFBIG when
 * the section claims more than ELF_SECTION_MAX_GO_BUILDINFO (nothing read). */
int go_runtime_version(Elf *elf, char *buf, size_t len);

/* The runtime layout of a Go version string ("go1.26.1"): Go 1.18-1.23 keep labels in a map,
 * 1.24+ in a sorted slice. Returns 0 and fills *out, or -ENOTSUP for versions not in the table
 * (before 1.18, after 1.26, "devel ..."; all of out is 0 then). */
int go_runtime_labels_layout(const char *version, struct go_labels_layout *out);

/* The same layout read from the executable's own DWARF (runtime.g, runtime.m, and
 * runtime/pprof.labelMap for the label form), for versions the table does not hold ("devel",
 * releases after it); elf was opened with elf_guard_begin() on fd. Labels are only read in the
 * slice form (kind NONE otherwise: the hook's spans still work). Returns 0 and fills *out,
 * -ENODATA without DWARF (stripped) or without runtime.g / runtime.m, -E2BIG when the DWARF is
 * too large to be worth opening, -ENOEXEC when a field is missing or out of bounds. */
int go_runtime_layout_from_dwarf(Elf *elf, int fd, struct go_labels_layout *out);

#endif /* SPANPROF_GO_RUNTIME_H */
