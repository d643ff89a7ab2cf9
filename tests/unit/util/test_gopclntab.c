// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for gopclntab: the Go workload's table checked against its own .symtab and DWARF,
 * the stripped build keeping the same table, and corrupted or truncated tables refused without reading
 * out of bounds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "util/gopclntab.h"
#include "util/gopclntab_inline.h"

/* An open Go executable and its table. */
struct go_file {
	int fd;
	Elf *elf;
	struct gopclntab t;
};

static int go_file_open(struct go_file *g, const char *rel)
{
	g->fd = open(build_path(rel), O_RDONLY | O_CLOEXEC);
	if (g->fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	g->elf = elf_begin(g->fd, ELF_C_READ_MMAP, NULL);
	if (!g->elf || gopclntab_from_elf(&g->t, g->elf))
		return -1;
	return 0;
}

static void go_file_close(struct go_file *g)
{
	if (g->elf)
		elf_end(g->elf);
	if (g->fd >= 0)
		close(g->fd);
}

static int setup(void **state)
{
	static struct go_file files[2];

	if (access(build_path("tests/workloads/go_spans"), R_OK) ||
	    access(build_path("tests/workloads/go_spans_stripped"), R_OK)) {
		printf("SKIP: Go workloads missing (is golang-go installed?)\n");
		*state = NULL;
		return 0;
	}
	if (go_file_open(&files[0], "tests/workloads/go_spans") ||
	    go_file_open(&files[1], "tests/workloads/go_spans_stripped"))
		return -1;
	*state = files;
	return 0;
}

static int teardown(void **state)
{
	struct go_file *files = *state;

	if (files) {
		go_file_close(&files[0]);
		go_file_close(&files[1]);
	}
	return 0;
}

/* The symbol at vaddr in .symtab, or NULL. */
static const char *symtab_name(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++)
			if (gelf_getsym(data, i, &sym) && sym.st_value == vaddr &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				return elf_strptr(elf, shdr.sh_link, sym.st_name);
	}
	return NULL;
}

static void test_gopclntab_names_and_entries_match_the_symbol_table(void **state)
{
	struct go_file *g = *state;
	struct gopclntab_func f;
	uint64_t same = 0, i;

	if (!g)
		skip();
	assert_true(g->t.nfunc > 1000);
	for (i = 0; i < g->t.nfunc; i++) {
		const char *sym;
		size_t n;

		assert_int_equal(gopclntab_func_at(&g->t, i, &f), 0);
		assert_true(f.end > f.entry);
		sym = symtab_name(g->elf, f.entry);
		if (!sym)
			continue;
		/* the symbol table marks assembly functions with ".abi0"; the pc table does not */
		n = strlen(f.name);
		if (!strncmp(sym, f.name, n) && (!sym[n] || !strcmp(sym + n, ".abi0")))
			same++;
	}
	printf("  %llu of %llu functions named as in .symtab\n", (unsigned long long)same,
	       (unsigned long long)g->t.nfunc);
	assert_true(same >= g->t.nfunc * 99 / 100);
}

/* Function containing pc, by name (gopclntab_find) in t. */
static int find_by_name(const struct gopclntab *t, const char *name, struct gopclntab_func *f)
{
	for (uint64_t i = 0; i < t->nfunc; i++)
		if (!gopclntab_func_at(t, i, f) && !strcmp(f->name, name))
			return 0;
	return -1;
}

/* file:line of pc according to binutils' addr2line reading the DWARF (an independent reader;
 * libdw does not read Go's line tables). Returns 0 or -1. */
static int dwarf_line(const char *binary, uint64_t pc, char *out, size_t len)
{
	char cmd[1024];
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd), "addr2line -e '%s' 0x%llx", binary, (unsigned long long)pc);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	ok = fgets(out, len, p) != NULL;
	pclose(p);
	if (!ok)
		return -1;
	out[strcspn(out, " \n")] = '\0'; /* drop " (discriminator N)" */
	return 0;
}

static void test_gopclntab_lines_match_dwarf(void **state)
{
	struct go_file *g = *state;
	static const char *const names[] = { "main.goWorkA", "main.spin", "main.worker" };
	const char *binary = build_path("tests/workloads/go_spans");
	char want[1024], got[1024];
	struct gopclntab_func f, found;
	int checked = 0;

	if (!g)
		skip();
	if (system("addr2line --version >/dev/null 2>&1"))
		skip();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(find_by_name(&g->t, names[i], &f), 0);
		for (uint64_t pc = f.entry; pc < f.end; pc += 5) {
			const char *file;
			int line;

			assert_int_equal(gopclntab_find(&g->t, pc, &found), 0);
			assert_string_equal(found.name, names[i]);
			/* -ENOENT: the int3 padding up to the next function has no line */
			if (gopclntab_source(&g->t, &found, pc, &file, &line) == -ENOENT)
				continue;
			assert_int_equal(dwarf_line(binary, pc, want, sizeof(want)), 0);
			snprintf(got, sizeof(got), "%s:%d", file, line);
			assert_string_equal(got, want);
			checked++;
		}
	}
	printf("  %d pcs with the same file:line as DWARF\n", checked);
	assert_true(checked >= 20);
}

/* addr2line -f -i: "function\nfile:line\n" per frame, innermost first. Returns frames read. */
static int dwarf_frames(const char *binary, uint64_t pc, char out[][256], int max)
{
	char cmd[1024], line[512];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' 0x%llx", binary,
		 (unsigned long long)pc);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (n < max && fgets(line, sizeof(line), p)) {
		line[strcspn(line, " \n")] = '\0';
		line[255] = '\0';
		memcpy(out[n++], line, 256);
	}
	pclose(p);
	return n / 2;
}

static void test_inlined_calls_match_dwarf(void **state)
{
	struct go_file *g = *state;
	static const char *const names[] = { "main.worker", "main.span", "main.main" };
	const char *binary = build_path("tests/workloads/go_spans");
	struct gopclntab_frame fr[8];
	struct gopclntab_inl inl;
	struct gopclntab_func f;
	char want[16][256], got[256];
	int inlined = 0;

	if (!g)
		skip();
	if (system("addr2line --version >/dev/null 2>&1"))
		skip();
	assert_int_equal(gopclntab_inline_from_elf(&inl, &g->t, g->elf), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(find_by_name(&g->t, names[i], &f), 0);
		for (uint64_t pc = f.entry; pc < f.end; pc++) {
			int n = gopclntab_inline_frames(&g->t, &inl, &f, pc, fr, 8), k;

			assert_true(n >= 1);
			assert_string_equal(fr[n - 1].function, names[i]);
			if (n == 1 || !fr[0].file)
				continue;
			k = dwarf_frames(binary, pc, want, 16);
			assert_int_equal(k, n);
			/* Same positions as the DWARF, frame by frame. binutils names inlined
			 * frames after their container; ours are the callees' own names. */
			for (int j = 0; j < n; j++) {
				snprintf(got, sizeof(got), "%s:%d", fr[j].file, fr[j].line);
				assert_string_equal(got, want[2 * j + 1]);
				if (j < n - 1)
					assert_string_not_equal(fr[j].function, names[i]);
			}
			assert_string_equal(want[2 * (n - 1)], names[i]);
			inlined++;
			pc += 7; /* a few pcs per inlined stretch are enough */
		}
	}
	printf("  %d pcs with the same inlined frames as DWARF\n", inlined);
	assert_true(inlined >= 5);
}

/* The stripped build keeps the same table: every function, at the same size, with no .symtab
 * left to name it (tests/unit/symbolize/test_elf_syms_go.c names it through elf_syms). */
static void test_stripped_binary_keeps_its_gopclntab(void **state)
{
	struct go_file *g = *state;
	struct gopclntab_func full, stripped;

	if (!g)
		skip();
	assert_int_equal(g[1].t.nfunc, g[0].t.nfunc);
	assert_int_equal(find_by_name(&g[0].t, "main.goWorkB", &full), 0);
	assert_int_equal(find_by_name(&g[1].t, "main.goWorkB", &stripped), 0);
	assert_int_equal(stripped.end - stripped.entry, full.end - full.entry);
	assert_null(symtab_name(g[1].elf, stripped.entry)); /* really stripped */
}

/* Walks everything the table offers; with a corrupted table every call may fail, none may read
 * outside the buffer (the copy is exactly sized, so ASan/valgrind runs catch it too). */
static void walk_all(const struct gopclntab *t, const struct gopclntab_inl *inl)
{
	struct gopclntab_frame fr[8];
	struct gopclntab_func f;
	const char *file;
	int line;

	for (uint64_t i = 0; i < t->nfunc && i < 4096; i++) {
		if (gopclntab_func_at(t, i, &f))
			continue;
		assert_true(f.name >= (const char *)t->data &&
			    f.name < (const char *)t->data + t->size);
		gopclntab_source(t, &f, f.entry, &file, &line);
		gopclntab_inline_frames(t, inl, &f, f.entry + (f.end - f.entry) / 2, fr, 8);
		gopclntab_find(t, f.entry + 1, &f);
	}
}

static void test_gopclntab_refuses_corrupt_and_truncated_tables(void **state)
{
	struct go_file *g = *state;
	struct gopclntab_inl inl;
	struct gopclntab t;
	uint8_t *copy;
	size_t size;
	unsigned int seed = 1;

	if (!g)
		skip();
	size = g->t.size;
	assert_int_equal(gopclntab_inline_from_elf(&inl, &g->t, g->elf), 0);
	/* Truncations: the header, inside the function table, inside the names. */
	for (size_t cut = 0; cut < size; cut += cut < 256 ? 1 : size / 97) {
		copy = malloc(cut ? cut : 1);
		assert_non_null(copy);
		memcpy(copy, g->t.data, cut);
		if (!gopclntab_init(&t, copy, cut, 0x401000))
			walk_all(&t, &inl);
		free(copy);
	}
	assert_int_equal(gopclntab_init(&t, g->t.data, 7, 0), -ENOEXEC);
	/* Random bytes over the header and the first rows of the function table. */
	copy = malloc(size);
	assert_non_null(copy);
	for (int round = 0; round < 300; round++) {
		memcpy(copy, g->t.data, size);
		for (int k = 0; k < 4; k++) {
			size_t at = (size_t)rand_r(&seed) % (g->t.functab + 64);

			copy[at] = (uint8_t)rand_r(&seed);
		}
		if (!gopclntab_init(&t, copy, size, 0x401000))
			walk_all(&t, &inl);
	}
	/* Specific lies: an absurd function count, an offset past the end, 4-byte pointers. */
	memcpy(copy, g->t.data, size);
	memset(copy + 8, 0xff, 8);
	assert_int_equal(gopclntab_init(&t, copy, size, 0), -ENOEXEC);
	memcpy(copy, g->t.data, size);
	memset(copy + 64, 0x7f, 8); /* pclnOffset (1.18+ header) */
	assert_int_equal(gopclntab_init(&t, copy, size, 0), -ENOEXEC);
	memcpy(copy, g->t.data, size);
	copy[7] = 4;
	assert_int_equal(gopclntab_init(&t, copy, size, 0), -ENOEXEC);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gopclntab_names_and_entries_match_the_symbol_table),
		cmocka_unit_test(test_gopclntab_lines_match_dwarf),
		cmocka_unit_test(test_inlined_calls_match_dwarf),
		cmocka_unit_test(test_stripped_binary_keeps_its_gopclntab),
		cmocka_unit_test(test_gopclntab_refuses_corrupt_and_truncated_tables),
	};

	return cmocka_run_group_tests_name("gopclntab", tests, setup, teardown);
}
