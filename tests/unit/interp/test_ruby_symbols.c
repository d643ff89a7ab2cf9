// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for ruby_symbols against a live Debian ruby: a script prints the addresses of its
 * own iseqs (method and block) and the line Ruby's disassembly gives each instruction; the
 * resolver, reading the process through /proc/PID/mem, must give the same label, path and
 * lines. A changed iseq at the same address is never shown under its old name. C functions are
 * named by their method's ID through the symbol table ruby_proc finds in the process (guessed
 * from rb_sym_all_symbols' code on Debian), else get the placeholder. Skipped without ruby. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover/proc_maps.h"
#include "interp/interp_budget.h"
#include "interp/ruby_lines.h"
#include "interp/ruby_symbols.h"
#include "interp/ruby_proc.h"
#include "tmpdir.h"

#define MAX_PAIRS 256

/* The script: two methods' iseqs (RTypedData.data of their InstructionSequence wrappers), then
 * "pos line" per instruction from #to_a, then it waits for stdin to close. */
static const char script[] =
	"require 'fiddle'\n"
	"def cart_total(items)\n"
	"  sum = 0\n"
	"  items.each do |i|\n"
	"    sum += i * 2\n"
	"  end\n"
	"  sum\n"
	"end\n"
	"def show(iseq)\n"
	"  addr = Fiddle::Pointer.new(Fiddle.dlwrap(iseq) + 32)[0, 8].unpack1('Q')\n"
	"  puts \"iseq #{addr} #{iseq.first_lineno} #{iseq.label}\"\n"
	"  line = 0\n"
	"  pos = 0\n"
	"  iseq.to_a[13].each do |x|\n"
	"    line = x if x.is_a?(Integer)\n"
	"    next unless x.is_a?(Array)\n"
	"    puts \"pos #{pos} #{line}\"\n"
	"    pos += x.size\n"
	"  end\n"
	"end\n"
	"m = RubyVM::InstructionSequence.of(method(:cart_total))\n"
	"show(m)\n"
	"m.each_child { |c| show(c) }\n"
	"intern = Fiddle::Function.new(Fiddle.dlopen(nil)['rb_intern'], [Fiddle::TYPE_VOIDP],\n"
	"                              Fiddle::TYPE_UINTPTR_T)\n"
	"%w[times cart_total + clock_gettime].each { |n| puts \"id #{intern.call(n)} #{n}\" }\n"
	/* A method whose file name carries ESC, BEL and a newline, and whose label the process
	 * rewrites in its own memory to hold ESC and a newline. */
	"ev = eval(\"def evil_x31m_spin\\n  1\\nend\\n\" \\\n"
	"          \"RubyVM::InstructionSequence.of(method(:evil_x31m_spin))\",\n"
	"          binding, \"/tmp/evil\\e]0;t\\a\\n.rb\", 1)\n"
	"label = Fiddle::Pointer[ev.label]\n"
	"label[4] = 27\n"
	"label[9] = 10\n"
	"puts \"evil #{Fiddle::Pointer.new(Fiddle.dlwrap(ev) + 32)[0, 8].unpack1('Q')}\"\n"
	"puts 'end'\n"
	"$stdout.flush\n"
	"$stdin.read\n";

struct iseq_expect {
	uint64_t addr;
	int first_line;
	char label[64];
	int npairs;
	unsigned int pos[MAX_PAIRS];
	int line[MAX_PAIRS];
};

struct live {
	char *dir;
	unsigned long long ids[4];
	char id_names[4][32];
	int nids;
	char path[512];
	pid_t pid;
	int in_fd;
	struct iseq_expect iseqs[2];
	int niseqs;
	unsigned long long evil_iseq; /* the method with control characters in its names */
};

static void parse_output(FILE *out, struct live *l)
{
	char line[256];
	struct iseq_expect *e = NULL;
	unsigned long long addr;
	unsigned int pos;
	int first, ln;

	while (fgets(line, sizeof(line), out) && strncmp(line, "end", 3)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "iseq %llu %d", &addr, &first) == 2 && l->niseqs < 2) {
			e = &l->iseqs[l->niseqs++];
			e->addr = addr;
			e->first_line = first;
			snprintf(e->label, sizeof(e->label), "%s",
				 strchr(strchr(line + 5, ' ') + 1, ' ') + 1);
		} else if (sscanf(line, "evil %llu", &l->evil_iseq) == 1) {
			continue;
		} else if (l->nids < 4 && sscanf(line, "id %llu %31s", &l->ids[l->nids],
						 l->id_names[l->nids]) == 2) {
			l->nids++;
		} else if (e && sscanf(line, "pos %u %d", &pos, &ln) == 2 &&
			   e->npairs < MAX_PAIRS) {
			e->pos[e->npairs] = pos;
			e->line[e->npairs++] = ln;
		}
	}
}

static void start_ruby(struct live *l)
{
	int in[2], outp[2];
	FILE *f, *out;

	snprintf(l->path, sizeof(l->path), "%s/cart.rb", l->dir);
	f = fopen(l->path, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(outp), 0);
	l->pid = fork();
	assert_true(l->pid >= 0);
	if (!l->pid) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		close(in[1]);
		close(outp[0]);
		execlp("ruby", "ruby", l->path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	l->in_fd = in[1];
	out = fdopen(outp[0], "r");
	assert_non_null(out);
	parse_output(out, l);
	fclose(out);
}

static int setup(void **state)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l || system("command -v ruby >/dev/null 2>&1")) {
		free(l);
		*state = NULL;
		return 0;
	}
	l->dir = tmpdir_new("ut-rbsym");
	if (!l->dir)
		return -1;
	start_ruby(l);
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct live *l = *state;
	int status;

	if (!l)
		return 0;
	close(l->in_fd);
	if (waitpid(l->pid, &status, 0) < 0)
		kill(l->pid, SIGKILL);
	tmpdir_remove(l->dir);
	free(l);
	return 0;
}

static uint64_t read_word(pid_t pid, uint64_t addr)
{
	char path[64];
	uint64_t v = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), (off_t)addr), sizeof(v));
	close(fd);
	return v;
}

/* The frame BPF captures for iseq at pos (the same reads as bpf/ruby_frames.bpf.c). */
static struct interp_frame capture(pid_t pid, const struct ruby_offsets *off, uint64_t iseq,
				   unsigned int pos)
{
	uint64_t body = read_word(pid, iseq + off->iseq_body);
	uint64_t loc = body + off->bpf.body_location;
	struct interp_frame f = { .code = iseq, .lasti = pos };

	f.firstlineno = (uint32_t)read_word(pid, loc + RUBY_LOC_FIRST_LINENO);
	f.check = (uint32_t)(read_word(pid, loc + RUBY_LOC_LABEL) ^
			     read_word(pid, loc + RUBY_LOC_PATHOBJ) ^ body);
	return f;
}

static struct live *live_or_skip(void **state)
{
	struct live *l = *state;

	if (!l) {
		printf("  skip: ruby is not installed\n");
		skip();
	}
	assert_int_equal(l->niseqs, 2);
	return l;
}

static const struct ruby_offsets *offsets(void)
{
	const struct ruby_offsets *off = ruby_offsets_for(3, 1);

	assert_non_null(off);
	return off;
}

static void test_labels_paths_and_lines_match_ruby(void **state)
{
	struct live *l = live_or_skip(state);
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 16, NULL);
	const struct iseq_expect *e;
	struct ruby_symbols_stats st;
	struct sym_line line;
	struct interp_frame f;
	int i, j;

	assert_non_null(rs);
	for (i = 0; i < l->niseqs; i++) {
		e = &l->iseqs[i];
		assert_true(e->npairs > 3);
		for (j = 0; j < e->npairs; j++) {
			f = capture(l->pid, offsets(), e->addr, e->pos[j]);
			ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
			assert_string_equal(line.function, e->label);
			assert_string_equal(line.file, l->path);
			if (line.line != e->line[j])
				fail_msg("%s pos %u: line %d, Ruby says %d", e->label, e->pos[j],
					 line.line, e->line[j]);
		}
	}
	assert_string_equal(l->iseqs[0].label, "cart_total");
	assert_string_equal(l->iseqs[1].label, "block in cart_total");
	ruby_symbols_get_stats(rs, &st);
	assert_int_equal(st.misses, 2); /* one read per iseq, then the cache */
	assert_true(st.hits > 6);
	ruby_symbols_free(rs);
}

/* An iseq address whose body, label or path changed (freed and reused) is not named. */
static void test_changed_iseq_is_never_named(void **state)
{
	struct live *l = live_or_skip(state);
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 16, NULL);
	struct ruby_symbols_stats st;
	struct sym_line line;
	struct interp_frame f;

	assert_non_null(rs);
	f = capture(l->pid, offsets(), l->iseqs[0].addr, 0);
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, "cart_total");
	f.check ^= 0x40; /* what BPF would capture from another iseq at this address */
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, "[ruby code gone]");
	assert_null(line.file);
	f.check ^= 0x40;
	f.firstlineno += 2; /* another first line: another cache key, read and refused */
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, "[ruby code gone]");
	f.code = 16; /* unmapped */
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, "[ruby code unreadable]");
	ruby_symbols_get_stats(rs, &st);
	assert_int_equal(st.stale, 2);
	assert_int_equal(st.read_errors, 1);
	ruby_symbols_free(rs);
}

/* C functions without a symbol table: the placeholder. */
static void test_c_function_placeholder(void **state)
{
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 1, NULL);
	struct interp_frame f = { .code = 12345, .flags = SPANPROF_RB_FRAME_CFUNC };
	struct sym_line line;

	(void)state;
	assert_non_null(rs);
	ruby_symbols_resolve(rs, getpid(), offsets(), 0, &f, &line);
	assert_string_equal(line.function, RUBY_CFUNC_PLACEHOLDER);
	assert_null(line.file);
	ruby_symbols_free(rs);
}

/* The method IDs Ruby's rb_intern gave are named from the process's own symbol table. */
static void test_c_functions_named_by_their_id(void **state)
{
	struct live *l = live_or_skip(state);
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 16, NULL);
	struct interp_frame f = { .flags = SPANPROF_RB_FRAME_CFUNC };
	struct file_verdicts *verdicts;
	struct ruby_proc proc;
	struct proc_maps maps;
	struct sym_line line;
	int i;

	assert_non_null(rs);
	assert_int_equal(proc_maps_read(l->pid, &maps), 0);
	/* The system's ruby is root's: its file is parsed by the caller, not queued. */
	verdicts = file_verdicts_new(4, ruby_interp.parsed_size, "test");
	assert_non_null(verdicts);
	assert_int_equal(ruby_interp.find("/proc", l->pid, &maps, verdicts, &proc), 0);
	file_verdicts_free(verdicts);
	proc_maps_release(&maps);
	assert_non_null(proc.off);
	assert_int_equal(proc.bpf.ec_mode, SPANPROF_RB_EC_TLS);
	assert_true(proc.bpf.tls_modid >= 1);
	assert_true(proc.exec_lo && proc.exec_hi > proc.exec_lo);
	assert_true(proc.global_symbols != 0);
	assert_int_equal(l->nids, 4);
	for (i = 0; i < l->nids; i++) {
		f.code = l->ids[i];
		ruby_symbols_resolve(rs, l->pid, proc.off, proc.global_symbols, &f, &line);
		assert_string_equal(line.function, l->id_names[i]);
		assert_null(line.file);
	}
	f.code = 1ull << 40; /* beyond the table */
	ruby_symbols_resolve(rs, l->pid, proc.off, proc.global_symbols, &f, &line);
	assert_string_equal(line.function, RUBY_CFUNC_PLACEHOLDER);
	ruby_symbols_free(rs);
}

/* One cache entry: the second iseq evicts the first, counted. */
static void test_cache_is_bounded(void **state)
{
	struct live *l = live_or_skip(state);
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 1, NULL);
	struct ruby_symbols_stats st;
	struct sym_line line;
	struct interp_frame f;
	int i;

	assert_non_null(rs);
	for (i = 0; i < 4; i++) {
		f = capture(l->pid, offsets(), l->iseqs[i % 2].addr, 0);
		ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
		assert_string_equal(line.function, l->iseqs[i % 2].label);
	}
	ruby_symbols_get_stats(rs, &st);
	assert_int_equal(st.evictions, 3);
	ruby_symbols_free(rs);
}

/* ESC, BEL and newline in a method's label and file name (which the process controls: its own
 * memory, its eval's file argument) are cleaned where they are read: '?' each, so no pprof
 * function or file name can drive a terminal that shows it. */
static void test_control_characters_cleaned_at_entry(void **state)
{
	struct live *l = live_or_skip(state);
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 16, NULL);
	struct sym_line line;
	struct interp_frame f;

	assert_non_null(rs);
	assert_true(l->evil_iseq != 0);
	f = capture(l->pid, offsets(), l->evil_iseq, 0);
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, "evil?x31m?spin");
	assert_string_equal(line.file, "/tmp/evil?]0;t??.rb");
	ruby_symbols_free(rs);
}

static uint64_t bytes_held(const struct ruby_symbols *rs)
{
	struct ruby_symbols_stats st;

	ruby_symbols_get_stats(rs, &st);
	return st.bytes;
}

/* What iseq's line tables take, from its body as Ruby laid it out: insns_info entries, and the
 * succ table when there is more than one entry. */
static uint64_t line_table_bytes(pid_t pid, const struct ruby_offsets *off, uint64_t iseq)
{
	uint64_t body = read_word(pid, iseq + off->iseq_body);
	uint32_t n = (uint32_t)read_word(pid, body + off->insns_size);
	uint32_t size = (uint32_t)read_word(pid, body + off->body_iseq_size);

	assert_true(n > 0 && n <= RUBY_SYMBOLS_MAX_INSN_ENTRIES);
	assert_true(size <= RUBY_SYMBOLS_MAX_ISEQ_SIZE);
	return (uint64_t)n * off->insn_entry_size + (n > 1 ? ruby_succ_table_bytes(size) : 0);
}

/* The byte count follows what the cache holds: each iseq adds the fixed entry size plus its
 * line tables, an evicted or stale one gives all of it back, a placeholder holds nothing. */
static void test_bytes_follow_inserts_and_evictions(void **state)
{
	struct live *l = live_or_skip(state);
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 1, NULL);
	struct interp_frame cf = { .code = 12345, .flags = SPANPROF_RB_FRAME_CFUNC };
	const uint64_t entry = ruby_symbols_entry_bytes();
	uint64_t empty, tables[2];
	struct ruby_symbols_stats st;
	struct sym_line line;
	struct interp_frame f;
	int i;

	assert_non_null(rs);
	empty = bytes_held(rs);
	assert_true(empty > 0); /* the cache and its hash */
	for (i = 0; i < 2; i++) {
		tables[i] = line_table_bytes(l->pid, offsets(), l->iseqs[i].addr);
		f = capture(l->pid, offsets(), l->iseqs[i].addr, 0);
		ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
		assert_string_equal(line.function, l->iseqs[i].label);
		/* one entry: the second iseq evicted the first and all it held */
		assert_int_equal(bytes_held(rs), empty + entry + tables[i]);
	}
	assert_true(tables[0] > 0 && tables[1] > 0);
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line); /* a hit holds nothing more */
	assert_int_equal(bytes_held(rs), empty + entry + tables[1]);
	f.check ^= 0x40; /* changed before it was read again: dropped, nothing held */
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, "[ruby code gone]");
	assert_int_equal(bytes_held(rs), empty);
	ruby_symbols_resolve(rs, getpid(), offsets(), 0, &cf, &line);
	assert_string_equal(line.function, RUBY_CFUNC_PLACEHOLDER);
	ruby_symbols_get_stats(rs, &st);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.bytes, empty);
	ruby_symbols_free(rs); /* ASan: nothing left behind */
}

/* Under a byte budget that holds the larger of the two iseqs but not both: each insert of the
 * other evicts the one cached, the bytes charged never pass the budget and match what the
 * cache holds, an iseq larger than the whole budget is named without being cached, and freeing
 * the cache gives everything back. */
static void test_budget_evicts_and_refuses_within_its_bytes(void **state)
{
	struct live *l = live_or_skip(state);
	const uint64_t entry = ruby_symbols_entry_bytes();
	uint64_t tables[2], fixed, biggest, max, empty;
	struct interp_budget *probe = interp_budget_new(1 << 20), *b;
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 16, probe);
	struct interp_budget_stats bs;
	struct ruby_symbols_stats st;
	struct sym_line line;
	struct interp_frame f;
	int i;

	interp_budget_get_stats(probe, &bs);
	fixed = bs.held;
	ruby_symbols_free(rs);
	interp_budget_free(probe);
	for (i = 0; i < 2; i++)
		tables[i] = line_table_bytes(l->pid, offsets(), l->iseqs[i].addr);
	biggest = tables[0] > tables[1] ? tables[0] : tables[1];
	/* room for one entry with the larger table and the user's record, not for two entries */
	max = fixed + entry + biggest + 64;
	assert_true(max < fixed + 2 * entry + tables[0] + tables[1]);
	b = interp_budget_new(max);
	rs = ruby_symbols_new("/proc", 16, b);
	assert_non_null(rs);
	empty = bytes_held(rs);
	for (i = 0; i < 6; i++) {
		f = capture(l->pid, offsets(), l->iseqs[i % 2].addr, 0);
		ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
		assert_string_equal(line.function, l->iseqs[i % 2].label);
		ruby_symbols_get_stats(rs, &st);
		interp_budget_get_stats(b, &bs);
		assert_true(bs.held <= max);
		assert_int_equal(st.bytes + bs.own_bytes, bs.held);
		assert_int_equal(st.bytes, empty + entry + tables[i % 2]); /* the one just read */
	}
	ruby_symbols_get_stats(rs, &st);
	assert_int_equal(st.evictions, 5);
	assert_int_equal(st.refused, 0);
	ruby_symbols_free(rs);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(bs.held, bs.own_bytes);
	interp_budget_free(b);
	/* a budget with no room for the larger iseq: named at each use, never cached */
	b = interp_budget_new(fixed + entry + biggest / 2);
	rs = ruby_symbols_new("/proc", 16, b);
	i = tables[0] > tables[1] ? 0 : 1;
	f = capture(l->pid, offsets(), l->iseqs[i].addr, 0);
	ruby_symbols_resolve(rs, l->pid, offsets(), 0, &f, &line);
	assert_string_equal(line.function, l->iseqs[i].label);
	ruby_symbols_get_stats(rs, &st);
	assert_int_equal(st.refused, 1);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(st.bytes + bs.own_bytes, bs.held);
	ruby_symbols_free(rs); /* ASan: the uncached tables were freed */
	interp_budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_paths_and_lines_match_ruby),
		cmocka_unit_test(test_changed_iseq_is_never_named),
		cmocka_unit_test(test_c_function_placeholder),
		cmocka_unit_test(test_c_functions_named_by_their_id),
		cmocka_unit_test(test_cache_is_bounded),
		cmocka_unit_test(test_control_characters_cleaned_at_entry),
		cmocka_unit_test(test_bytes_follow_inserts_and_evictions),
		cmocka_unit_test(test_budget_evicts_and_refuses_within_its_bytes),
	};

	return cmocka_run_group_tests_name("ruby_symbols", tests, setup, teardown);
}
