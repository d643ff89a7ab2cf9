// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Go version from .go.buildinfo and the runtime.g layout per version (a table: stripped
 * binaries have no DWARF to read it from). */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "discover/go_runtime.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"

/* "\xff Go buildinf:" then pointer size and flags; flag 2: version and module info follow the
 * 32-byte header as varint-length strings (Go 1.18+, debug/buildinfo). */
#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_HEADER 32
#define BUILDINFO_INLINE 0x2

int go_runtime_version(Elf *elf, char *buf, size_t len)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_section_named(elf, ".go.buildinfo", ELF_SCN_PROGBITS, &shdr);
	Elf_Data *data = NULL;
	const unsigned char *p;
	uint64_t n = 0, off = BUILDINFO_HEADER;
	unsigned int shift;
	int err;

	if (!scn)
		return -ENODATA;
	err = elf_section_data(scn, ELF_SECTION_MAX_GO_BUILDINFO, &data);
	if (err == -EFBIG)
		return err;
	if (err || !data->d_buf)
		return -ENODATA;
	p = data->d_buf;
	if (data->d_size < BUILDINFO_HEADER || memcmp(p, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN))
		return -ENOEXEC;
	if (!(p[BUILDINFO_MAGIC_LEN + 1] & BUILDINFO_INLINE))
		return -ENOTSUP;
	for (shift = 0;; shift += 7) {
		if (off >= data->d_size || shift > 28)
			return -ENOEXEC;
		n |= (uint64_t)(p[off] & 0x7f) << shift;
		if (!(p[off++] & 0x80))
			break;
	}
	if (n > data->d_size - off)
		return -ENOEXEC;
	if (n >= len)
		return -ENOSPC;
	memcpy(buf, p + off, n);
	buf[n] = '\0';
	return 0;
}

/* Offsets on amd64 of runtime.g.labels, g.m, m.curg and g.goid, as the runtime's DWARF gives
 * them: 1.19 from Debian 12's golang-go, 1.21-1.26 from Debian's golang-1.2X packages
 * (scripts/fetch-go-toolchains.sh; the unit test checks every toolchain it finds against this
 * table); 1.18 and 1.20 share 1.19's runtime.g and runtime.m up to these fields (golang/go
 * runtime2.go) but were not read here. */
static const struct {
	int minor_lo, minor_hi;
	struct go_labels_layout layout;
} labels_table[] = {
	{ 18, 20, { 360, GO_LABELS_MAP, 48, 192, 152 } },
	{ 21, 22, { 344, GO_LABELS_MAP, 48, 192, 152 } },
	{ 23, 23, { 352, GO_LABELS_MAP, 48, 192, 160 } },
	{ 24, 24, { 352, GO_LABELS_SLICE, 48, 192, 160 } },
	{ 25, 25, { 344, GO_LABELS_SLICE, 48, 184, 152 } },
	{ 26, 26, { 352, GO_LABELS_SLICE, 48, 184, 152 } },
};

int go_runtime_labels_layout(const char *version, struct go_labels_layout *out)
{
	char *end;
	long minor;
	size_t i;

	*out = (struct go_labels_layout){ 0 };
	if (strncmp(version, "go1.", 4))
		return -ENOTSUP; /* "devel ..." and toolchains of unknown lineage */
	minor = strtol(version + 4, &end, 10);
	if (end == version + 4)
		return -ENOTSUP;
	for (i = 0; i < sizeof(labels_table) / sizeof(labels_table[0]); i++)
		if (minor >= labels_table[i].minor_lo && minor <= labels_table[i].minor_hi) {
			*out = labels_table[i].layout;
			return 0;
		}
	return -ENOTSUP;
}
