// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The g pointer's offset from FS base in a Go amd64 executable, from its PT_TLS segment and
 * runtime.tlsg (or, stripped, from the runtime's own g loads). Every ELF value is bounded. */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "discover/go_tls.h"
#include "util/gopclntab.h"
#include "util/elf_layout.h"

#define TLSG_NAME "runtime.tlsg"
#define TLSG_SIZE 8
/* The runtime's stack-growth entry loads g from TLS in every Go release; its code is read
 * whole, up to this many bytes. */
#define MORESTACK_NAME "runtime.morestack"
#define MORESTACK_MAX_BYTES 512

int go_tls_block_size(uint64_t memsz, uint64_t vaddr, uint64_t align, uint64_t *block)
{
	if (!align)
		align = 1; /* 0 and 1 both mean no constraint */
	if (align & (align - 1) || align > GO_TLS_MAX_ALIGN || memsz > GO_TLS_MAX_BLOCK)
		return -ENOEXEC;
	*block = memsz + ((0 - vaddr - memsz) & (align - 1));
	return 0;
}

/* The PT_TLS program header. Returns 1 when there is one, 0 when not, -ENOEXEC when unread,
 * -ENOTSUP when the file is a shared library (ET_DYN without PT_INTERP: Go built with
 * -buildmode=c-shared), whose TLS block the loader places at run time. */
static int find_pt_tls(Elf *elf, GElf_Phdr *tls)
{
	int found = 0, interp = 0;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n, i;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return -ENOEXEC;
		interp |= ph.p_type == PT_INTERP;
		if (ph.p_type == PT_TLS && !found) {
			*tls = ph;
			found = 1;
		}
	}
	if (found && eh.e_type == ET_DYN && !interp)
		return -ENOTSUP;
	return found;
}

struct tlsg_scan {
	int found;
	uint64_t value;
};

static void on_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct tlsg_scan *t = ctx;

	if (!t->found && GELF_ST_TYPE(sym->st_info) == STT_TLS && !strcmp(name, TLSG_NAME)) {
		t->value = sym->st_value;
		t->found = 1;
	}
}

/* st_value of runtime.tlsg (its offset in the TLS segment) from the symbol tables. Returns 0,
 * -ENODATA when there is no such symbol (stripped), or -EFBIG (a table over the cap). */
static int tlsg_value(Elf *elf, int fd, uint64_t *value)
{
	struct tlsg_scan t = { 0 };

	if (elf_each_defined_symbol(elf, fd, on_symbol, &t) == -EFBIG)
		return -EFBIG;
	if (!t.found)
		return -ENODATA;
	*value = t.value;
	return 0;
}

/* The %fs displacement of `mov %fs:disp32, reg` (64 REX.W 8b ModRM SIB disp32 with mod 00,
 * rm 100 and SIB 0x25, no REX.X: an absolute address) at p, if that is what is there.
 * Returns 1 if so. */
static int fs_load_at(const unsigned char *p, size_t left, int32_t *disp)
{
	if (left < 9 || p[0] != 0x64 || (p[1] & 0xfa) != 0x48 || p[2] != 0x8b ||
	    (p[3] & 0xc7) != 0x04 || p[4] != 0x25)
		return 0;
	memcpy(disp, p + 5, sizeof(*disp));
	return 1;
}

/* runtime.morestack's code in the file (found through .gopclntab, within its size cap and name
 * budget: linear in the table's size). Returns its size or -errno (-EFBIG: over a cap). */
static long read_morestack(Elf *elf, int fd, unsigned char *buf, size_t len)
{
	struct gopclntab t;
	struct gopclntab_func fn;
	uint64_t size, off;
	int err;

	err = gopclntab_from_elf(&t, elf);
	if (err)
		return err == -EFBIG ? err : -ENOTSUP;
	err = gopclntab_find_name(&t, MORESTACK_NAME, 0, &fn);
	if (err == -E2BIG)
		return -EFBIG;
	if (err == -ENOEXEC)
		return err;
	if (err || fn.end <= fn.entry)
		return -ENOTSUP;
	size = fn.end - fn.entry < len ? fn.end - fn.entry : len;
	if (elf_vaddr_to_offset(elf, fn.entry, size, PF_X, &off) || off > INT64_MAX ||
	    pread(fd, buf, size, (off_t)off) != (ssize_t)size)
		return -ENOEXEC;
	return (long)size;
}

/* Stripped and externally linked: the displacement every g load of runtime.morestack uses.
 * -ENOTSUP for a PIE: externally linked, it has no .gopclntab section to find the function
 * by, and its g loads read the offset from the GOT or an immediate, not a displacement. */
static int offset_from_code(Elf *elf, int fd, int32_t *offset)
{
	unsigned char code[MORESTACK_MAX_BYTES];
	long n = read_morestack(elf, fd, code, sizeof(code));
	int32_t disp;
	int found = 0;
	long i;

	if (n < 0)
		return (int)n;
	for (i = 0; i < n; i++) {
		if (!fs_load_at(code + i, (size_t)(n - i), &disp))
			continue;
		if (found && disp != *offset)
			return -ENOTSUP; /* two different slots: not the runtime we know */
		*offset = disp;
		found = 1;
	}
	return found ? 0 : -ENOTSUP;
}

int go_tls_g_offset(Elf *elf, int fd, int32_t *offset)
{
	GElf_Phdr tls = { 0 };
	uint64_t block, value;
	int64_t off;
	int err = find_pt_tls(elf, &tls);

	if (err < 0)
		return err;
	if (!err) {
		*offset = GO_TLS_G_INTERNAL;
		return 0;
	}
	if (tls.p_memsz < TLSG_SIZE ||
	    go_tls_block_size(tls.p_memsz, tls.p_vaddr, tls.p_align, &block))
		return -ENOEXEC;
	err = tlsg_value(elf, fd, &value);
	if (err == -EFBIG)
		return err;
	if (!err) {
		if (value > tls.p_memsz - TLSG_SIZE)
			return -ENOEXEC;
		off = (int64_t)value - (int64_t)block;
	} else if (tls.p_memsz == TLSG_SIZE) {
		off = -(int64_t)block; /* runtime.tlsg is all the block holds */
	} else {
		err = offset_from_code(elf, fd, offset);
		if (err)
			return err;
		off = *offset;
	}
	/* Inside the block (which ends at FS base) with room for the pointer: */
	if (off < -(int64_t)block || off > -TLSG_SIZE)
		return -ENOEXEC;
	*offset = (int32_t)off;
	return 0;
}
