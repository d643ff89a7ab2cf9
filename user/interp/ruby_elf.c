// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds CRuby's version, execution-context variable and VM loop in an untrusted ELF (libelf). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interp/interp_file.h"
#include "interp/ruby_elf.h"
#include "interp/ruby_elf_hidden.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"

#ifndef R_X86_64_DTPMOD64
#define R_X86_64_DTPMOD64 16
#endif
#define EC_SYMBOL "ruby_current_ec"
#define VERSION_MAX 16

/* Bytes of rb_sym_all_symbols searched for the load of global_symbols.str_sym. */
#define ALL_SYMBOLS_SCAN 64
#define STR_SYM_OFFSET 8

/* The symbols read, each the first of its name; the first marks a CRuby (interp_elf_begin()). */
enum { SYM_VERSION, SYM_ALL_SYMBOLS, SYM_ERRINFO, SYM_EVAL_MAIN, SYM_COUNT };

/* The symbols noted otherwise: the TLS kind of ruby_current_ec, the last of the others' names. */
static void note_other_sym(struct ruby_elf *out, const char *name, const GElf_Sym *sym)
{
	if (!strcmp(name, EC_SYMBOL) && GELF_ST_TYPE(sym->st_info) == STT_TLS) {
		out->has_tls_ec = 1;
		out->tls_ec_offset = sym->st_value;
	} else if (!strcmp(name, "ruby_current_execution_context_ptr")) {
		out->ec_ptr_vaddr = sym->st_value;
	} else if (!strcmp(name, "ruby_global_symbols")) {
		out->global_symbols = sym->st_value;
	} else if (!strcmp(name, "rb_vm_exec") && !out->exec_hi) {
		out->exec_lo = sym->st_value;
		out->exec_hi = sym->st_value + sym->st_size;
	}
}

struct sym_scan {
	struct ruby_elf *out;
	struct elf_wanted_sym *w;
};

static void on_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct sym_scan *scan = ctx;

	if (!elf_wanted_sym_note(scan->w, SYM_COUNT, name, sym))
		note_other_sym(scan->out, name, sym);
}

/* Whether relocation r of a table whose symbols are in symscn names ruby_current_ec. */
static int names_ec(Elf *elf, Elf_Scn *symscn, const GElf_Rela *r)
{
	Elf_Data *data;
	const char *name;
	GElf_Shdr sh;
	GElf_Sym sym;

	if (elf_section_data(symscn, ELF_SECTION_MAX_SYMBOLS, &data) ||
	    !gelf_getshdr(symscn, &sh) || !gelf_getsym(data, GELF_R_SYM(r->r_info), &sym))
		return 0;
	name = elf_name_at(elf, sh.sh_link, sym.st_name);
	return name && !strcmp(name, EC_SYMBOL);
}

/* The GOT slot the dynamic linker fills with ruby_current_ec's TLS module id (general-dynamic
 * access, as in Debian's libruby). */
static void find_dtpmod(Elf *elf, struct ruby_elf *out)
{
	Elf_Scn *scn = NULL, *symscn;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Rela r;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn)) && !out->dtpmod_got) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || elf_section_data(scn, ELF_SECTION_MAX_SYMBOLS, &data))
			continue;
		n = data->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getrela(data, i, &r) ||
			    GELF_R_TYPE(r.r_info) != R_X86_64_DTPMOD64 ||
			    !names_ec(elf, symscn, &r))
				continue;
			out->dtpmod_got = r.r_offset;
			break;
		}
	}
}

/* rb_sym_all_symbols starts by reading global_symbols.str_sym (after the VM lock's check of the
 * main ractor): each `mov disp32(%rip), %r64` (REX.W 8b /r, ModRM mod 00 rm 101) in its first
 * bytes gives a candidate. */
static void guess_global_symbols(Elf *elf, int fd, const GElf_Sym *fn, struct ruby_elf *out)
{
	uint8_t code[ALL_SYMBOLS_SCAN];
	size_t len = fn->st_size && fn->st_size < sizeof(code) ? fn->st_size : sizeof(code);
	int32_t disp;
	size_t i;

	if (elf_read_vaddr(elf, fd, fn->st_value, code, len))
		return;
	for (i = 0; i + 7 <= len && out->nguesses < RUBY_ELF_MAX_GUESSES; i++) {
		if ((code[i] & 0xfb) != 0x48 || code[i + 1] != 0x8b || (code[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&disp, code + i + 3, sizeof(disp));
		out->global_symbols_guess[out->nguesses++] =
			fn->st_value + i + 7 + (int64_t)disp - STR_SYM_OFFSET;
	}
}

/* PT_LOAD segments (for the bias) and whether the file is a program (PT_INTERP or ET_EXEC). */
static void note_phdrs(Elf *elf, struct ruby_elf *out)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n, i;

	elf_loads_read(elf, &out->loads);
	if (gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC)
		out->is_exec = 1;
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
			out->is_exec = 1;
}

int ruby_elf_parse_version(const char *s, int *major, int *minor, int *patch)
{
	unsigned int a, b, c;

	if (sscanf(s, "%u.%u.%u", &a, &b, &c) != 3 || a > 99 || b > 99 || c > 999)
		return -EINVAL;
	*major = a;
	*minor = b;
	*patch = c;
	return 0;
}

int ruby_elf_read(int fd, struct ruby_elf *out)
{
	struct elf_wanted_sym w[SYM_COUNT] = {
		[SYM_VERSION] = { .name = "ruby_version" },
		[SYM_ALL_SYMBOLS] = { .name = "rb_sym_all_symbols" },
		[SYM_ERRINFO] = { .name = "rb_errinfo" },
		[SYM_EVAL_MAIN] = { .name = "rb_iseq_eval_main" },
	};
	const GElf_Sym *ver = &w[SYM_VERSION].sym;
	char version[VERSION_MAX] = "";
	size_t len;
	Elf *elf;
	int err = 0;

	memset(out, 0, sizeof(*out));
	elf = interp_elf_begin(fd, w, SYM_COUNT, on_symbol, &(struct sym_scan){ out, w });
	if (!elf)
		return -errno;
	len = ver->st_size ? ver->st_size : VERSION_MAX - 1;
	if (len >= VERSION_MAX)
		len = VERSION_MAX - 1;
	if (elf_read_vaddr(elf, fd, ver->st_value, version, len) ||
	    ruby_elf_parse_version(version, &out->major, &out->minor, &out->patch)) {
		err = -ENOEXEC;
		goto out;
	}
	note_phdrs(elf, out);
	if (out->has_tls_ec)
		find_dtpmod(elf, out);
	/* 3.3+ keeps ruby_current_ec and rb_vm_exec local; their users still show them. */
	if (!out->has_tls_ec && out->major >= 3 && w[SYM_ERRINFO].found)
		ruby_elf_ec_from_code(elf, fd, &w[SYM_ERRINFO].sym, out);
	if (!out->exec_hi && w[SYM_EVAL_MAIN].found)
		ruby_elf_exec_from_code(elf, fd, &w[SYM_EVAL_MAIN].sym, out);
	if (!out->global_symbols && w[SYM_ALL_SYMBOLS].found)
		guess_global_symbols(elf, fd, &w[SYM_ALL_SYMBOLS].sym, out);
out:
	elf_end(elf);
	return err;
}
