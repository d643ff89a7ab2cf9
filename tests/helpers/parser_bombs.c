// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: crafted files against the agent's parsers (see parser_bombs.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crafted_elf.h"
#include "fixture_build.h"
#include "parser_bombs.h"

#define GO_MAGIC_120 0xfffffff1u

static const uint8_t ret_text[16] = { 0xc3 };

/* The Go hook's function name (discover/hook_elf.h's HOOK_GO_FUNC_SUFFIX, as a package path's
 * last part): the agent reads a function table only when its section holds it somewhere, so a
 * bomb carries it once, after the name every row shares, to reach the table's reader. */
static const char hook_name[] = "main.spanprofGoSpanSet";

/* The .gopclntab: header, the name, the hook's name, nfunc + 1 functab rows, one _func record
 * (nameoff 0) that every row shares. */
static uint8_t *gopclntab(uint64_t nfunc, size_t name_len, size_t *len)
{
	uint64_t hdr[9] = { 0 }, functab = (72 + name_len + 1 + sizeof(hook_name) + 7) & ~7ull, i;
	uint64_t func = functab + (nfunc + 1) * 8;
	uint8_t *t;

	*len = func + 48;
	t = calloc(1, *len);
	if (!t)
		return NULL;
	memcpy(t, &(uint32_t){ GO_MAGIC_120 }, 4);
	t[6] = 1; /* quantum */
	t[7] = 8; /* pointer size */
	hdr[0] = nfunc;
	hdr[1] = 1; /* nfiles */
	hdr[2] = 0x1000; /* text */
	hdr[3] = hdr[4] = hdr[5] = hdr[6] = 72; /* names, cu, files, pc tables */
	hdr[7] = functab;
	memcpy(t + 8, hdr, 64);
	memset(t + 72, 'a', name_len);
	memcpy(t + 72 + name_len + 1, hook_name, sizeof(hook_name));
	for (i = 0; i <= nfunc; i++) {
		uint32_t row[2] = { (uint32_t)(i * 16), (uint32_t)(func - functab) };

		memcpy(t + functab + i * 8, row, sizeof(row));
	}
	return t;
}

int parser_bomb_gopclntab(const char *path, uint64_t nfunc, size_t name_len)
{
	return parser_bomb_gopclntab_sized(path, nfunc, name_len, 0);
}

int parser_bomb_gopclntab_sized(const char *path, uint64_t nfunc, size_t name_len,
				uint64_t table_bytes)
{
	size_t len;
	uint8_t *t = gopclntab(nfunc, name_len, &len);
	struct crafted_section secs[] = {
		{ ".text", SHT_PROGBITS, 0x1000, ret_text, sizeof(ret_text), 0 },
		{ ".gopclntab", SHT_PROGBITS, 0x100000, t, len,
		  table_bytes > len ? table_bytes : 0 },
	};
	int err;

	if (!t)
		return -1;
	err = crafted_elf_write(path, secs, 2);
	free(t);
	return err ? -1 : 0;
}

int parser_bomb_sparse(const char *path, unsigned int which)
{
	static const uint8_t head[72] = { 0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	struct crafted_section secs[4] = {
		{ ".text", SHT_PROGBITS, 0x1000, ret_text, sizeof(ret_text), 0 },
	};
	size_t n = 1;

	if (which & SPARSE_GOPCLNTAB)
		secs[n++] = (struct crafted_section){ ".gopclntab", SHT_PROGBITS, 0x100000,
						      head,	    sizeof(head), 2ull << 30 };
	if (which & SPARSE_BUILDINFO)
		secs[n++] =
			(struct crafted_section){ ".go.buildinfo",     SHT_PROGBITS, 0x2000,
						  "\xff Go buildinf:", 14,	     1ull << 30 };
	if (which & SPARSE_EH_FRAME)
		secs[n++] = (struct crafted_section){ ".eh_frame", SHT_PROGBITS, 0x3000,
						      head,	   sizeof(head), 1ull << 30 };
	return crafted_elf_write(path, secs, n) ? -1 : 0;
}

int parser_bomb_cfi(const char *dir, const char *lib, int rows)
{
	char src[600];
	FILE *fp;
	int i;

	snprintf(src, sizeof(src), "%s/cfi_bomb.s", dir);
	fp = fopen(src, "w");
	if (!fp)
		return -1;
	fputs("\t.text\n\t.globl cfi_bomb\n\t.type cfi_bomb,@function\ncfi_bomb:\n"
	      "\t.cfi_startproc\n",
	      fp);
	for (i = 0; i < rows; i++)
		fprintf(fp, "\tnop\n\t.cfi_def_cfa_offset %d\n", i & 1 ? 8 : 16);
	fputs("\tret\n\t.cfi_endproc\n\t.size cfi_bomb,.-cfi_bomb\n", fp);
	if (fclose(fp))
		return -1;
	return fixture_sh("cc -shared -nostdlib -o '%s' '%s'", lib, src) ? -1 : 0;
}

/* Points section idx of path at its string table link and gives it entsize (crafted_elf_write
 * leaves both 0). */
static int link_section(const char *path, unsigned int idx, uint32_t link, uint64_t entsize)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	off_t at;
	int fd = open(path, O_RDWR | O_CLOEXEC), err = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
		goto out;
	at = (off_t)(eh.e_shoff + (uint64_t)idx * sizeof(sh));
	if (pread(fd, &sh, sizeof(sh), at) != (ssize_t)sizeof(sh))
		goto out;
	sh.sh_link = link;
	sh.sh_entsize = entsize;
	err = pwrite(fd, &sh, sizeof(sh), at) == (ssize_t)sizeof(sh) ? 0 : -1;
out:
	close(fd);
	return err;
}

int parser_bomb_symtab(const char *path, uint64_t symtab_bytes)
{
	static const char strtab[] = "\0crafted_symbol";
	Elf64_Sym first[2] = { { 0 },
			       { .st_name = 1,
				 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				 .st_shndx = 1,
				 .st_value = 0x1000,
				 .st_size = 1 } };
	/* Sections 1, 2, 3: .text, .strtab, .symtab (0 is the null section). */
	const struct crafted_section secs[] = {
		{ ".text", SHT_PROGBITS, 0x1000, ret_text, sizeof(ret_text), 0 },
		{ ".strtab", SHT_STRTAB, 0, strtab, sizeof(strtab), 0 },
		/* libelf refuses a table that is not a whole number of entries. */
		{ ".symtab", SHT_SYMTAB, 0, first, sizeof(first),
		  symtab_bytes / sizeof(Elf64_Sym) * sizeof(Elf64_Sym) },
	};

	if (crafted_elf_write(path, secs, 3))
		return -1;
	return link_section(path, 3, 2, sizeof(Elf64_Sym));
}

/* Adds a PT_TLS of 16 bytes (at vaddr 0x3000) after the PT_LOAD crafted_elf_write wrote: both
 * fit in the first page, before the sections. */
static int add_tls_segment(const char *path)
{
	Elf64_Phdr tls = {
		.p_type = PT_TLS, .p_flags = PF_R, .p_vaddr = 0x3000, .p_memsz = 16, .p_align = 8
	};
	Elf64_Ehdr eh;
	int fd = open(path, O_RDWR | O_CLOEXEC), err = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || eh.e_phnum != 1)
		goto out;
	eh.e_phnum = 2;
	if (pwrite(fd, &tls, sizeof(tls), (off_t)(eh.e_phoff + sizeof(tls))) != sizeof(tls) ||
	    pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	err = 0;
out:
	close(fd);
	return err;
}

int parser_bomb_thread_ctx(const char *path, uint64_t table_bytes, uint64_t linked_bytes)
{
	static const char dynstr[] = "\0otel_thread_ctx_v1";
	Elf64_Sym syms[2] = { { 0 },
			      { .st_name = 1,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_TLS),
				.st_shndx = 1,
				.st_size = 8 } };
	static const Elf64_Rela rela = { 0 };
	struct crafted_section secs[4 + 2 * THREAD_CTX_BOMB_LINKED];
	unsigned int i, n = 0;

	/* 1 .tbss, 2 .dynstr, 3 .dynsym, 4 .rela.dyn, then the small relocation sections and the
	 * sections they name as their symbol tables. libelf refuses a table that is not a whole
	 * number of entries. */
	secs[n++] = (struct crafted_section){ ".tbss", SHT_NOBITS, 0x3000, NULL, 0, 16 };
	secs[n++] = (struct crafted_section){ ".dynstr", SHT_STRTAB, 0, dynstr, sizeof(dynstr), 0 };
	secs[n++] = (struct crafted_section){
		".dynsym", SHT_DYNSYM,	 0,
		syms,	   sizeof(syms), table_bytes / sizeof(syms[0]) * sizeof(syms[0])
	};
	secs[n++] = (struct crafted_section){
		".rela.dyn", SHT_RELA,	   0,
		&rela,	     sizeof(rela), table_bytes / sizeof(rela) * sizeof(rela)
	};
	for (i = 0; i < THREAD_CTX_BOMB_LINKED; i++)
		secs[n++] = (struct crafted_section){ ".rela.linked", SHT_RELA,	    0,
						      &rela,	      sizeof(rela), 0 };
	for (i = 0; i < THREAD_CTX_BOMB_LINKED; i++)
		secs[n++] = (struct crafted_section){ ".linked", SHT_PROGBITS, 0, NULL,
						      0,	 linked_bytes };
	if (crafted_elf_write(path, secs, n) || add_tls_segment(path) ||
	    link_section(path, 3, 2, sizeof(Elf64_Sym)) ||
	    link_section(path, 4, 3, sizeof(Elf64_Rela)))
		return -1;
	for (i = 0; i < THREAD_CTX_BOMB_LINKED; i++)
		if (link_section(path, 5 + i, 5 + THREAD_CTX_BOMB_LINKED + i, sizeof(Elf64_Rela)))
			return -1;
	return 0;
}
