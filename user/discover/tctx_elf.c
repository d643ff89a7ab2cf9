// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* .dynsym -> otel_thread_ctx_v1 (STT_TLS, defined) -> PT_TLS -> the dynamic relocations that
 * say how the module's TLS is reached at run time. */
#include <errno.h>
#include <string.h>

#include "discover/tctx_elf.h"
#include "util/elf_guard.h"

/* Relocation types of x86-64 TLS (elf.h has them; spelled here so other hosts build). */
#define R_TLS_DTPMOD64 16
#define R_TLS_DTPOFF64 17
#define R_TLS_TPOFF64 18
#define R_TLS_TLSDESC 36

/* The variable in .dynsym: only an exported symbol is a publisher the OTEP describes. The same
 * walk tells whether the module is spanprof's hook library (out->span_hook). */
struct tctx_scan {
	struct tctx_elf *out;
	size_t symndx;
	int found;
};

static int on_dynsym(void *ctx, size_t ndx, const char *name, const GElf_Sym *sym)
{
	struct tctx_scan *t = ctx;

	if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !t->out->span_hook)
		t->out->span_hook = !strcmp(name, TCTX_SPAN_HOOK_SYMBOL);
	else if (!t->found && GELF_ST_TYPE(sym->st_info) == STT_TLS && !strcmp(name, TCTX_SYMBOL)) {
		t->out->sym_offset = sym->st_value;
		t->symndx = ndx;
		t->found = 1;
	}
	return t->found && t->out->span_hook;
}

/* Read with pread through a small buffer (elf_each_symbol_in()): every mapped module is looked
 * at, and most are no publisher. */
static int find_symbol(Elf *elf, int fd, struct tctx_elf *out, size_t *symndx)
{
	struct tctx_scan t = { .out = out };
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_named(elf, ".dynsym", ELF_SCN_ANY, &sh);

	/* Its name first, through file_find()'s small buffer: most modules have no such string,
	 * and a .dynsym in GNU hash order costs a read per name. */
	if (!scn || sh.sh_type != SHT_DYNSYM ||
	    !elf_symbol_names_hold(elf, fd, TCTX_SYMBOL, sizeof(TCTX_SYMBOL)) ||
	    elf_each_symbol_in(elf, fd, scn, on_dynsym, &t) || !t.found)
		return -ENOENT;
	*symndx = t.symndx;
	return 0;
}

static int read_tls_segment(Elf *elf, struct tctx_elf *out)
{
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_TLS)
			continue;
		out->tls_memsz = ph.p_memsz;
		out->tls_align = ph.p_align ? ph.p_align : 1;
		out->tls_vaddr = ph.p_vaddr;
		/* The variable must lie in the block, and the alignment be a power of two. */
		if (out->sym_offset + sizeof(uint64_t) > ph.p_memsz ||
		    (out->tls_align & (out->tls_align - 1)))
			return -ENOEXEC;
		return 0;
	}
	return -ENOEXEC;
}

/* Notes one dynamic relocation. Module-wide ones (the module id, a descriptor) may name any
 * symbol this module defines, or none (local-dynamic); offsets only count for the variable. */
static void note_reloc(struct tctx_elf *out, const GElf_Rela *r, size_t symndx, int own_sym)
{
	size_t sym = GELF_R_SYM(r->r_info);
	int var = sym == symndx;

	switch (GELF_R_TYPE(r->r_info)) {
	case R_TLS_DTPMOD64:
		if ((var || !sym || own_sym) && (!out->dtpmod_got || var))
			out->dtpmod_got = r->r_offset;
		break;
	case R_TLS_DTPOFF64:
		if (var)
			out->dtpoff_got = r->r_offset;
		break;
	case R_TLS_TLSDESC:
		if (var)
			out->tlsdesc_got = r->r_offset;
		break;
	case R_TLS_TPOFF64:
		if (var)
			out->tpoff_got = r->r_offset;
		break;
	}
}

struct reloc_walk {
	struct tctx_elf *out;
	size_t symndx;
};

static void on_rela(void *ctx, const GElf_Rela *r, const GElf_Sym *sym)
{
	struct reloc_walk *w = ctx;
	int own = sym && GELF_ST_TYPE(sym->st_info) == STT_TLS && sym->st_shndx != SHN_UNDEF;

	note_reloc(w->out, r, w->symndx, own);
}

int tctx_elf_read(int fd, struct tctx_elf *out)
{
	size_t symndx = 0;
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	elf = elf_guard_begin(fd);
	if (!elf)
		return errno ? -errno : -ENOEXEC;
	err = find_symbol(elf, fd, out, &symndx);
	err = err ?: read_tls_segment(elf, out);
	/* The symbol only matters to a module-wide relocation (the module id). */
	err = err   ?:
		      elf_each_rela(elf, fd, ELF_RELA_TYPE_BIT(R_TLS_DTPMOD64), on_rela,
				    &(struct reloc_walk){ out, symndx });
	if (!err)
		elf_loads_read(elf, &out->loads);
	elf_end(elf);
	return err;
}
