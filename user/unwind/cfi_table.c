// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Builds a file's unwind rows: for every FDE, libdw's dwarf_cfi_addrframe gives the frame state
 * and the [start, end) of each CFI row; rows are then sorted, gaps between FDEs marked "no row",
 * and neighbours with equal rules merged. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <elfutils/libdw.h>

#include "unwind/cfi_fde.h"
#include "unwind/cfi_rule.h"
#include "unwind/cfi_table.h"
#include "util/clock.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"
#include "util/sort_inplace.h"
#include "util/sorted_u64.h"

/* Rows as read, with the length of each (FDEs may come in any order), packed: a large file
 * has hundreds of thousands, all held until they are sorted. A row's length fits 32 bits (a
 * file's text is at most CFI_TABLE_MAX_TEXT; a longer one from a crafted FDE is cut). */
struct raw_row {
	uint64_t pc;
	uint32_t len;
	int32_t cfa_off, rbp_off;
	uint8_t cfa_kind, rbp_kind;
};

_Static_assert(sizeof(struct raw_row) == 24, "a raw row packs into 24 bytes");

static uint64_t raw_end(const struct raw_row *r)
{
	return r->pc + r->len;
}

static struct spanprof_unwind_rule raw_rule(const struct raw_row *r)
{
	return (struct spanprof_unwind_rule){ .cfa_kind = r->cfa_kind,
					      .rbp_kind = r->rbp_kind,
					      .cfa_off = r->cfa_off,
					      .rbp_off = r->rbp_off };
}

struct builder {
	Dwarf_CFI *cfi;
	struct raw_row *raw;
	size_t nraw, cap;
	struct cfi_table_stats *stats;
	const atomic_int *cancel; /* NULL: never */
	int fd; /* the file, for the sizes of compressed sections; -1: unknown */
	uint64_t cpu_start_ns; /* this thread's CPU time when the build began */
};

/* Before each row: -ECANCELED once asked to stop, -ETIME once the file has spent its budget. */
static int row_allowed(struct builder *b, uint64_t program_bytes)
{
	if (b->cancel && atomic_load_explicit(b->cancel, memory_order_relaxed))
		return -ECANCELED;
	/* libdw runs the CIE's and the FDE's program from their start for every row: charge the
	 * whole program, the most one lookup can cost. */
	b->stats->replay_bytes += program_bytes + 1;
	if (b->stats->replay_bytes > CFI_TABLE_MAX_REPLAY_BYTES)
		return -ETIME;
	if (!(++b->stats->rows_read & 1023) && clock_ns(CLOCK_THREAD_CPUTIME_ID) - b->cpu_start_ns >
						       CFI_TABLE_MAX_BUILD_CPU_MS * 1000000ull)
		return -ETIME;
	return 0;
}

static int add_raw(struct builder *b, uint64_t pc, uint64_t end,
		   const struct spanprof_unwind_rule *rule)
{
	struct raw_row *n;
	size_t cap;

	if (b->nraw == b->cap) {
		cap = b->cap ? b->cap + b->cap / 2 :
			       1024; /* by half: less unused room at the end */
		n = realloc(b->raw, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->raw = n;
		b->cap = cap;
	}
	b->raw[b->nraw++] =
		(struct raw_row){ .pc = pc,
				  .len = end - pc > UINT32_MAX ? UINT32_MAX : (uint32_t)(end - pc),
				  .cfa_off = rule->cfa_off,
				  .rbp_off = rule->rbp_off,
				  .cfa_kind = rule->cfa_kind,
				  .rbp_kind = rule->rbp_kind };
	return 0;
}

static void count_rule(struct cfi_table_stats *s, const struct spanprof_unwind_rule *r)
{
	switch (r->cfa_kind) {
	case SPANPROF_CFA_PLT1:
	case SPANPROF_CFA_PLT2:
		s->plt_rows++;
		break;
	case SPANPROF_CFA_SIGNAL:
		s->signal_rows++;
		break;
	case SPANPROF_CFA_STOP:
		s->stop_rows++;
		break;
	case SPANPROF_CFA_INVALID:
		s->invalid_rows++;
		break;
	}
}

/* One FDE: walk its CFI rows with dwarf_cfi_addrframe, each call giving the row's range. Each
 * call replays the FDE's program from its start, so a long FDE costs rows x program bytes: the
 * file's budget (row_allowed) bounds that sum, and the cancel flag is looked at every row. */
static int on_fde(void *ctx, uint64_t lo, uint64_t hi, uint64_t program_bytes)
{
	struct spanprof_unwind_rule rule;
	struct builder *b = ctx;
	Dwarf_Addr start, end;
	Dwarf_Frame *fr;
	uint64_t pc = lo;
	bool signalp;
	int ra, err;

	if (b->cancel && atomic_load_explicit(b->cancel, memory_order_relaxed))
		return -ECANCELED;
	b->stats->fdes++;
	while (pc < hi) {
		err = row_allowed(b, program_bytes);
		if (err)
			return err;
		if (dwarf_cfi_addrframe(b->cfi, pc, &fr))
			break; /* no usable state here: the rest of the FDE stays a gap */
		ra = dwarf_frame_info(fr, &start, &end, &signalp);
		cfi_rule_decode(fr, signalp, ra, &rule);
		free(fr);
		if (end > hi || end <= pc)
			end = hi;
		count_rule(b->stats, &rule);
		err = add_raw(b, pc, end, &rule);
		if (err)
			return err;
		pc = end;
	}
	return 0;
}

/* By pc, then length; two rows at one pc with one length (duplicate FDEs) by their rule, so
 * the one that wins in push_row() does not depend on the sort. */
static int cmp_raw(const void *pa, const void *pb)
{
	const struct raw_row *a = pa, *b = pb;

	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	if (a->cfa_kind != b->cfa_kind)
		return a->cfa_kind < b->cfa_kind ? -1 : 1;
	if (a->cfa_off != b->cfa_off)
		return a->cfa_off < b->cfa_off ? -1 : 1;
	if (a->rbp_kind != b->rbp_kind)
		return a->rbp_kind < b->rbp_kind ? -1 : 1;
	return a->rbp_off < b->rbp_off ? -1 : a->rbp_off > b->rbp_off;
}

/* Appends a row to t, or merges it with the last one. With t->rows NULL, only counts: the same
 * walk run twice sizes the table exactly before it is filled. */
static void push_row(struct cfi_table *t, struct cfi_row *last, uint64_t pc,
		     const struct spanprof_unwind_rule *rule)
{
	if (t->nrows && cfi_rule_equal(&last->rule, rule))
		return;
	if (t->nrows && last->pc == pc) {
		last->rule = *rule; /* the later row of two at one PC wins */
		if (t->rows)
			t->rows[t->nrows - 1].rule = *rule;
		return;
	}
	*last = (struct cfi_row){ pc, *rule };
	if (t->rows)
		t->rows[t->nrows] = *last;
	t->nrows++;
}

/* A Go executable (Go's function table, build info or build id is there; an externally linked
 * PIE has only the latter two): its Go code has no .eh_frame FDE when it was linked with C, and
 * keeps frame pointers. */
static int is_go_executable(Elf *elf)
{
	static const char *const go_sections[] = { ".gopclntab", ".data.rel.ro.gopclntab",
						   ".go.buildinfo", ".note.go.buildid" };
	GElf_Shdr shdr;
	size_t i;

	for (i = 0; i < sizeof(go_sections) / sizeof(go_sections[0]); i++)
		if (elf_section_named(elf, go_sections[i], ELF_SCN_ANY, &shdr))
			return 1;
	return 0;
}

/* The walk behind compact(): with t->rows NULL it counts the rows (and sets *lead, see
 * compact()), else it fills them. Each raw row is copied out before rows are written for it. */
static void merge_rows(const struct raw_row *raw, size_t nraw, struct cfi_table *t, int go,
		       size_t *lead)
{
	static const struct spanprof_unwind_rule none = { .cfa_kind = SPANPROF_CFA_NONE };
	static const struct spanprof_unwind_rule fp = { .cfa_kind = SPANPROF_CFA_FP };
	const struct spanprof_unwind_rule *gap = go ? &fp : &none;
	struct cfi_row last = { 0 };
	uint64_t covered = 0;
	size_t i;

	t->nrows = 0;
	if (lead)
		*lead = 0;
	if (go && nraw && raw[0].pc)
		push_row(t, &last, 0, gap);
	for (i = 0; i < nraw; i++) {
		struct raw_row r = raw[i];
		struct spanprof_unwind_rule rule = raw_rule(&r);

		if (lead && t->nrows > i && t->nrows - i > *lead)
			*lead = t->nrows - i;
		if (i && covered < r.pc)
			push_row(t, &last, covered, gap);
		push_row(t, &last, r.pc, &rule);
		if (raw_end(&r) > covered)
			covered = raw_end(&r);
	}
	if (nraw)
		push_row(t, &last, covered, gap);
}

_Static_assert(sizeof(struct cfi_row) == sizeof(struct raw_row) &&
		       _Alignof(struct cfi_row) == _Alignof(struct raw_row),
	       "a table row takes a raw row's place");

/* Sorted, merged rows with a "no row" entry at every gap and after the last FDE; in a Go
 * executable, a frame-pointer entry instead, also before the first FDE. For a large file the raw
 * rows and the table are tens of MB each, so the table is written over the raw rows it is made
 * from: they are sorted in place (qsort() would copy them), then moved up by lead places, lead
 * being the most the rows written ever get ahead of the raw rows read (a gap row comes between
 * two FDEs that do not touch; equal neighbours merge), so that no row is overwritten before it
 * is read; the table is then trimmed to its length. */
static int compact(struct builder *b, struct cfi_table *t, int go)
{
	size_t n, lead, cap;
	struct raw_row *grown;

	sort_inplace(b->raw, b->nraw, sizeof(*b->raw), cmp_raw);
	t->rows = NULL;
	merge_rows(b->raw, b->nraw, t, go, &lead);
	n = t->nrows;
	cap = b->nraw + lead > n ? b->nraw + lead : n;
	grown = realloc(b->raw, (cap ? cap : 1) * sizeof(*b->raw));
	if (!grown)
		return -ENOMEM;
	b->raw = NULL; /* the memory is the table's now */
	memmove(grown + lead, grown, b->nraw * sizeof(*grown));
	t->rows = (struct cfi_row *)grown;
	merge_rows(grown + lead, b->nraw, t, go, NULL);
	if (t->nrows != n)
		return -EINVAL;
	t->rows = realloc(t->rows, (n ? n : 1) * sizeof(*t->rows)) ?: t->rows;
	return 0;
}

static uint64_t text_bytes(Elf *elf)
{
	uint64_t sum = 0;
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && ph.p_flags & PF_X)
			sum += ph.p_filesz;
	return sum;
}

static int read_eh_frame(Elf *elf, struct builder *b)
{
	uint64_t skipped = 0;
	GElf_Shdr shdr;
	Elf_Scn *scn, *hdr;
	Elf_Data *data;
	int err;

	scn = elf_section_named(elf, ".eh_frame", ELF_SCN_FILE_BYTES, &shdr);
	if (!scn)
		return -ENOENT;
	/* libdw reads .eh_frame and .eh_frame_hdr whole: both within the stated maximum. */
	hdr = elf_section_named(elf, ".eh_frame_hdr", ELF_SCN_FILE_BYTES, &(GElf_Shdr){ 0 });
	err = elf_section_data(scn, ELF_SECTION_MAX_CFI, &data);
	if (!err && hdr)
		err = elf_section_data(hdr, ELF_SECTION_MAX_CFI, &(Elf_Data *){ NULL });
	if (err)
		return err == -EFBIG ? err : -EINVAL;
	b->cfi = dwarf_getcfi_elf(elf);
	if (!b->cfi)
		return -ENOENT; /* an empty .eh_frame (just its terminator) */
	err = cfi_fde_each(elf, data, shdr.sh_addr, true, on_fde, b, &skipped);
	dwarf_cfi_end(b->cfi);
	return err;
}

static int read_debug_frame(Elf *elf, struct builder *b)
{
	uint64_t skipped = 0;
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *data;
	Dwarf *dw;
	int err;

	scn = elf_section_named(elf, ".debug_frame", ELF_SCN_FILE_BYTES, &shdr);
	if (!scn)
		return -ENOENT;
	/* dwarf_begin_elf reads (and inflates) every .debug_* section: all of them within the
	 * stated maximum, .debug_frame within its own. */
	if (elf_guard_dwarf_bytes(elf, b->fd) > CFI_TABLE_MAX_DWARF_BYTES)
		return -EFBIG;
	err = elf_section_data(scn, ELF_SECTION_MAX_CFI, &data);
	if (err)
		return err == -EFBIG ? err : -EINVAL;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	b->cfi = dw ? dwarf_getcfi(dw) : NULL;
	if (!b->cfi) {
		dwarf_end(dw);
		return -ENOENT;
	}
	err = cfi_fde_each(elf, data, 0, false, on_fde, b, &skipped);
	dwarf_end(dw);
	return err;
}

/* .eh_frame (what the runtime itself unwinds with), else .debug_frame. */
static int read_rows(Elf *elf, struct builder *b)
{
	int err = read_eh_frame(elf, b);

	if ((err && err != -ENOENT) || b->nraw)
		return err;
	return read_debug_frame(elf, b);
}

static int build(Elf *elf, int fd, struct cfi_table *out, const atomic_int *cancel)
{
	struct builder b = { .stats = &out->stats, .cancel = cancel, .fd = fd };
	uint64_t t0 = clock_mono_ns() / NS_PER_US;
	int err;

	memset(out, 0, sizeof(*out));
	b.cpu_start_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	out->stats.text_bytes = text_bytes(elf);
	if (out->stats.text_bytes > CFI_TABLE_MAX_TEXT)
		return -E2BIG;
	err = read_rows(elf, &b);
	if (!err && !b.nraw)
		err = -ENOENT;
	err = err ?: compact(&b, out, is_go_executable(elf));
	free(b.raw);
	out->stats.build_us = clock_mono_ns() / NS_PER_US - t0;
	if (err)
		cfi_table_release(out);
	return err;
}

int cfi_table_build(Elf *elf, struct cfi_table *out, const atomic_int *cancel)
{
	return build(elf, -1, out, cancel);
}

int cfi_table_build_fd(int fd, struct cfi_table *out, const atomic_int *cancel)
{
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	err = elf_guard_check(fd); /* header tables within their caps before libelf reads them */
	if (err)
		return err == -E2BIG ? -EFBIG : -EINVAL;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EINVAL;
	}
	err = build(elf, fd, out, cancel);
	elf_end(elf);
	return err;
}

void cfi_table_release(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t pc)
{
	/* The last row whose pc <= the wanted pc. */
	size_t lo = sorted_u64_upper_bound(t->rows, t->nrows, sizeof(*t->rows),
					   offsetof(struct cfi_row, pc), pc);

	return lo ? &t->rows[lo - 1] : NULL;
}
