// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds ruby_current_ec and rb_vm_exec in a libruby that does not export them (see the header). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "unwind/cfi_fde.h"
#include "interp/ruby_elf_hidden.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"

#ifndef R_X86_64_DTPMOD64
#define R_X86_64_DTPMOD64 16
#endif
#ifndef R_X86_64_DTPOFF64
#define R_X86_64_DTPOFF64 17
#endif
/* Bytes of a function searched for the sequences below. */
#define CODE_SCAN 64
/* Jumps out of rb_iseq_eval_main whose targets are checked against the CFI (a walk each). */
#define EXEC_MAX_TRIES 4
/* A VM loop larger than this is not rb_vm_exec (3.1's is 2.9 KB, 3.3's 0.6 KB). */
#define EXEC_MAX_SIZE (64u << 10)

/* x86-64 general-dynamic TLS access (the ABI's fixed 16 bytes), then the load of the pointer:
 *   66 48 8d 3d <disp32>   data16 lea slot(%rip), %rdi
 *   66 66 48 e8 <rel32>    data16 data16 rex.W call __tls_get_addr
 *   48 8b 00               mov (%rax), %rax */
static const uint8_t GD_LEA[] = { 0x66, 0x48, 0x8d, 0x3d };
static const uint8_t GD_CALL[] = { 0x66, 0x66, 0x48, 0xe8 };
static const uint8_t LOAD_PTR[] = { 0x48, 0x8b, 0x00 };
#define GD_LEN 19

static size_t read_code(Elf *elf, int fd, const GElf_Sym *fn, uint8_t *code, size_t cap)
{
	size_t len = fn->st_size && fn->st_size < cap ? fn->st_size : cap;

	while (len && elf_read_vaddr(elf, fd, fn->st_value, code, len))
		len /= 2; /* a function near the end of its segment */
	return len;
}

struct slot_relocs {
	uint64_t vaddr, offset;
	bool has_mod, has_off;
};

/* For a general-dynamic GOT slot pair at w->vaddr: has_mod when a R_X86_64_DTPMOD64 (any symbol)
 * fills its first word; offset from a R_X86_64_DTPOFF64 of its second word (symbol value +
 * addend), and has_off then. */
static void on_slot_rela(void *ctx, const GElf_Rela *r, const GElf_Sym *sym)
{
	struct slot_relocs *w = ctx;

	if (r->r_offset == w->vaddr && GELF_R_TYPE(r->r_info) == R_X86_64_DTPMOD64)
		w->has_mod = true;
	if (r->r_offset != w->vaddr + 8 || GELF_R_TYPE(r->r_info) != R_X86_64_DTPOFF64)
		return;
	if (GELF_R_SYM(r->r_info) && !sym)
		return; /* names a symbol that cannot be read */
	w->offset = (sym ? sym->st_value : 0) + (uint64_t)r->r_addend;
	w->has_off = true;
}

/* The size of the file's TLS block (PT_TLS p_memsz), 0 when it has none. */
static uint64_t tls_size(Elf *elf)
{
	GElf_Phdr ph;
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_TLS)
			return ph.p_memsz;
	return 0;
}

int ruby_elf_ec_from_code(Elf *elf, int fd, const GElf_Sym *errinfo, struct ruby_elf *out)
{
	uint8_t code[CODE_SCAN];
	size_t len = read_code(elf, fd, errinfo, code, sizeof(code)), i;
	struct slot_relocs w = { 0 };
	uint64_t slot, tls;
	int32_t disp;

	for (i = 0; i + GD_LEN <= len; i++) {
		if (memcmp(code + i, GD_LEA, sizeof(GD_LEA)) ||
		    memcmp(code + i + 8, GD_CALL, sizeof(GD_CALL)) ||
		    memcmp(code + i + 16, LOAD_PTR, sizeof(LOAD_PTR)))
			continue;
		memcpy(&disp, code + i + 4, sizeof(disp));
		slot = errinfo->st_value + i + 8 + (int64_t)disp;
		/* The slot's second word is the variable's offset in the module's TLS block: from
		 * its relocation for an exported variable, else written at link time. */
		w.vaddr = slot;
		if (elf_each_rela(elf, fd, ELF_RELA_TYPE_BIT(R_X86_64_DTPOFF64), on_slot_rela, &w))
			return -ENOENT; /* relocations over their stated maximum: nothing read */
		tls = tls_size(elf);
		if (!w.has_mod ||
		    (!w.has_off &&
		     elf_read_vaddr(elf, fd, slot + 8, &w.offset, sizeof(w.offset))) ||
		    tls < sizeof(uint64_t) || w.offset > tls - sizeof(uint64_t))
			return -ENOENT;
		out->has_tls_ec = 1;
		out->tls_ec_offset = w.offset;
		out->dtpmod_got = slot;
		return 0;
	}
	return -ENOENT;
}

struct fde_find {
	uint64_t lo, hi;
};

static int on_fde(void *ctx, uint64_t lo, uint64_t hi, uint64_t program_bytes)
{
	struct fde_find *f = ctx;

	(void)program_bytes;
	if (lo != f->lo)
		return 0;
	f->hi = hi;
	return 1;
}

/* The end of the function whose .eh_frame FDE starts at lo; 0 when none does. */
static uint64_t fde_end(Elf *elf, uint64_t lo)
{
	struct fde_find f = { .lo = lo };
	uint64_t skipped = 0;
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_section_named(elf, ".eh_frame", ELF_SCN_FILE_BYTES, &shdr);
	Elf_Data *data;

	if (!scn || elf_section_data(scn, ELF_SECTION_MAX_CFI, &data) ||
	    cfi_fde_each(elf, data, shdr.sh_addr, true, on_fde, &f, &skipped) != 1)
		return 0;
	return f.hi;
}

int ruby_elf_exec_from_code(Elf *elf, int fd, const GElf_Sym *eval_main, struct ruby_elf *out)
{
	uint8_t code[4 * CODE_SCAN];
	size_t len = read_code(elf, fd, eval_main, code, sizeof(code)), i;
	uint64_t lo = eval_main->st_value, hi = lo + eval_main->st_size, target, end;
	int tries = 0;
	int32_t rel;

	for (i = 0; i + 5 <= len && tries < EXEC_MAX_TRIES; i++) {
		if (code[i] != 0xe9) /* jmp rel32 */
			continue;
		memcpy(&rel, code + i + 1, sizeof(rel));
		target = lo + i + 5 + (int64_t)rel;
		if (target >= lo && target < hi)
			continue;
		tries++;
		end = fde_end(elf, target);
		if (!end || end <= target || end - target > EXEC_MAX_SIZE)
			continue;
		out->exec_lo = target;
		out->exec_hi = end;
		return 0;
	}
	return -ENOENT;
}
