// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Go runtime layout read from an executable's own DWARF (runtime.g, runtime.m,
 * runtime/pprof.labelMap), for toolchains the version table does not know, such as "devel". */
#include <errno.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "discover/go_runtime.h"
#include "util/elf_guard.h"

/* Decompressed DWARF a runtime layout is worth reading (a Go executable's is a few MiB). */
#define GO_DWARF_MAX_BYTES (64u << 20)
/* Top-level DIEs and struct members looked at, at most: a crafted file cannot make the walk
 * long. A Go executable has some tens of thousands of top-level DIEs. */
#define GO_DWARF_MAX_DIES (1u << 20)
#define GO_DWARF_MAX_MEMBERS 4096
/* Offsets past this cannot be runtime.g's or runtime.m's fields. */
#define GO_DWARF_MAX_OFFSET 4096
/* runtime/pprof.labelMap as a struct holding one slice (Go 1.24 and later). */
#define GO_LABEL_SLICE_BYTES 24

struct go_dwarf_types {
	Dwarf_Die g, m, label_map;
	int have_g, have_m, have_label_map;
};

/* DW_AT_data_member_location of member name in struct st. Returns 0, -ENOENT, or -ENOEXEC. */
static int member_offset(Dwarf_Die *st, const char *name, uint32_t *off)
{
	Dwarf_Attribute attr;
	Dwarf_Word loc;
	Dwarf_Die m;
	const char *n;
	int i = 0;

	if (dwarf_child(st, &m))
		return -ENOENT;
	do {
		if (dwarf_tag(&m) != DW_TAG_member || !(n = dwarf_diename(&m)) || strcmp(n, name))
			continue;
		if (!dwarf_attr(&m, DW_AT_data_member_location, &attr) ||
		    dwarf_formudata(&attr, &loc) || loc > GO_DWARF_MAX_OFFSET)
			return -ENOEXEC;
		*off = (uint32_t)loc;
		return 0;
	} while (++i < GO_DWARF_MAX_MEMBERS && dwarf_siblingof(&m, &m) == 0);
	return -ENOENT;
}

/* Notes die when it is one of the structs looked for. */
static void note_type(Dwarf_Die *die, struct go_dwarf_types *t)
{
	const char *name;

	if (dwarf_tag(die) != DW_TAG_structure_type || !(name = dwarf_diename(die)))
		return;
	if (!t->have_g && !strcmp(name, "runtime.g")) {
		t->g = *die;
		t->have_g = 1;
	} else if (!t->have_m && !strcmp(name, "runtime.m")) {
		t->m = *die;
		t->have_m = 1;
	} else if (!t->have_label_map && !strcmp(name, "runtime/pprof.labelMap")) {
		t->label_map = *die;
		t->have_label_map = 1;
	}
}

/* Walks the top-level DIEs of every compilation unit (Go puts its types in one of them). */
static void find_types(Dwarf *dw, struct go_dwarf_types *t)
{
	Dwarf_Off off = 0, next;
	size_t hsize, seen = 0;
	Dwarf_Die cu, die;

	while (seen < GO_DWARF_MAX_DIES &&
	       dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do
				note_type(&die, t);
			while (++seen < GO_DWARF_MAX_DIES &&
			       !(t->have_g && t->have_m && t->have_label_map) &&
			       dwarf_siblingof(&die, &die) == 0);
		}
		if (t->have_g && t->have_m && t->have_label_map)
			return;
		off = next;
	}
}

int go_runtime_layout_from_dwarf(Elf *elf, int fd, struct go_labels_layout *out)
{
	struct go_dwarf_types t = { 0 };
	struct go_labels_layout l = { 0 };
	size_t bytes = elf_guard_dwarf_bytes(elf, fd);
	Dwarf *dw;
	int err = -ENODATA;

	*out = (struct go_labels_layout){ 0 };
	if (!bytes)
		return -ENODATA;
	if (bytes > GO_DWARF_MAX_BYTES)
		return -E2BIG;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return -ENODATA;
	find_types(dw, &t);
	if (!t.have_g || !t.have_m)
		goto out_end;
	err = -ENOEXEC;
	if (member_offset(&t.g, "labels", &l.offset) || member_offset(&t.g, "m", &l.m_offset) ||
	    member_offset(&t.g, "goid", &l.goid_offset) ||
	    member_offset(&t.m, "curg", &l.curg_offset) || !l.m_offset || !l.goid_offset ||
	    !l.curg_offset)
		goto out_end;
	/* Labels are read only in the slice form (Go 1.24 on); without runtime/pprof linked in
	 * nothing can set them, and the hook's spans still work. */
	l.kind = t.have_label_map && dwarf_bytesize(&t.label_map) == GO_LABEL_SLICE_BYTES ?
			 GO_LABELS_SLICE :
			 GO_LABELS_NONE;
	*out = l;
	err = 0;
out_end:
	dwarf_end(dw);
	return err;
}
