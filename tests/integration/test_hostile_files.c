// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Crafted files an unprivileged user maps, against the real agent: a .gopclntab whose rows all
 * name one long string, sections that claim gigabytes of a sparse file, and an .eh_frame whose
 * one FDE has 200,000 rows; then all of them at once. An ordinary service profiled alongside
 * keeps its windows, the agent stays small and stops promptly, and each refusal is logged with
 * the file's path and counted. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "crafted_elf.h"
#include "fixture_build.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "profile_census.h"

/* The Helm chart's memory limit for the agent. An ASan build (make sanitize) keeps shadow memory
 * and a quarantine of freed blocks besides: there the limit is 4 times as high, still far below
 * the gigabytes the attacks made the agent allocate. */
#if defined(__SANITIZE_ADDRESS__)
#define CHART_MEMORY_LIMIT (4 * (192ull << 20))
#else
#define CHART_MEMORY_LIMIT (192ull << 20)
#endif
#define GO_MAGIC_120 0xfffffff1u
#define MAX_ATTACKERS 8

static int setup(void **state)
{
	struct hostile_fixture *f;

	if (hostile_fixture_new("it-hostile-files", &f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	hostile_fixture_free(*state);
	return 0;
}

/* Starts the agent, then lets the normal workload (held by start_all) begin. */
static void start_agent(struct hostile_fixture *f, struct agent_proc *agent,
			const char *const *argv)
{
	char gate[700];

	assert_int_equal(hostile_fixture_start_agent(f, agent, argv), 0);
	snprintf(gate, sizeof(gate), "%s/normal-go", f->dir);
	close(open(gate, O_WRONLY | O_CREAT, 0644));
}

/* Starts an ordinary workload as root (service it-parsers-normal) and the attackers as the
 * user, each mapping one crafted file; fills pid_args for --pid. The workload gives up when no
 * agent attaches its hook within 10 s, so it is held (a shell that then execs it, keeping the
 * pid) until start_agent() opens its gate. */
static void start_all(struct hostile_fixture *f, const char *const *files, int n,
		      char pid_args[][16])
{
	char out[64], gate[700];
	const char *work[] = { "/bin/sh",
			       "-c",
			       "while [ ! -e \"$0\" ]; do sleep 0.05; done; exec \"$1\" spans 1 60",
			       gate,
			       build_path("tests/workloads/span_workload"),
			       NULL };
	int i;

	snprintf(gate, sizeof(gate), "%s/normal-go", f->dir);
	assert_true(n <= MAX_ATTACKERS);
	assert_true(hostile_fixture_spawn(f, -1, "it-parsers-normal", "normal.out", work, 0) > 0);
	for (i = 0; i < n; i++) {
		const char *map[] = { f->workload, "map", files[i], "60", NULL };

		snprintf(out, sizeof(out), "attacker%d.out", i);
		if (hostile_fixture_spawn(f, f->user.uid, "it-parsers-attacker", out, map, 20) < 0)
			fail_msg("attacker %d never mapped %s", i, files[i]);
	}
	for (i = 0; i < f->npids; i++)
		snprintf(pid_args[i], 16, "%d", f->pids[i]);
}

static int normal_windows(const char *dir, double *max_gap_s)
{
	return hostile_windows(dir, "it-parsers-normal", max_gap_s);
}

static double guard_count(int port, const char *guard)
{
	double v = -1;

	if (hostile_guard(port, guard, &v))
		fail_msg("/metrics has no guard %s", guard);
	return v;
}

/* Polls /metrics until guard counts at least want; returns the last value read. */
static double wait_guard(int port, const char *guard, double want, double timeout_s)
{
	double end = hostile_now_s() + timeout_s, v;

	while ((v = guard_count(port, guard)) < want && hostile_now_s() < end)
		usleep(100000);
	return v;
}

/* The agent profiles the normal workload and the attackers for run_s seconds: the normal
 * service's windows must come every second, and the agent must stop within 2 s of SIGTERM. */
static void check_windows_and_sigterm(const char *out, struct agent_proc *agent, double run_s)
{
	double start = hostile_now_s(), gap, took;
	int windows, status;

	while (hostile_now_s() - start < run_s)
		usleep(100000);
	windows = normal_windows(out, &gap);
	took = hostile_sigterm(agent->pid, &status);
	printf("  %d windows of the normal service, at most %.2f s apart; stopped %.2f s after "
	       "SIGTERM\n",
	       windows, gap, took);
	if (took < 0)
		fail_msg("agent ignored SIGTERM for 30 s");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(windows >= (int)run_s - 2);
	assert_true(gap < 1.9);
	assert_true(took < 2.0);
}

static uint8_t *gopclntab_bomb(uint64_t nfunc, size_t name_len, size_t *len)
{
	uint64_t hdr[9] = { 0 }, functab = (72 + name_len + 1 + 7) & ~7ull, i;
	uint64_t func = functab + (nfunc + 1) * 8;
	uint8_t *t;

	*len = func + 48; /* one _func record (nameoff 0) all rows share */
	t = calloc(1, *len);
	assert_non_null(t);
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
	for (i = 0; i <= nfunc; i++) {
		uint32_t row[2] = { (uint32_t)(i * 16), (uint32_t)(func - functab) };

		memcpy(t + functab + i * 8, row, sizeof(row));
	}
	return t;
}

static void write_gopclntab_bomb(const char *path, uint64_t nfunc, size_t name_len)
{
	static const uint8_t text[16] = { 0xc3 };
	size_t len;
	uint8_t *t = gopclntab_bomb(nfunc, name_len, &len);
	struct crafted_section secs[] = {
		{ ".text", SHT_PROGBITS, 0x1000, text, sizeof(text), 0 },
		{ ".gopclntab", SHT_PROGBITS, 0x100000, t, len, 0 },
	};

	assert_int_equal(crafted_elf_write(path, secs, 2), 0);
	free(t);
}

/* 500,000 functab rows naming one 4 MB string (each row made the agent scan the string), and
 * the same with a 60 KB string (under the name cap: the name budget stops it). */
static void test_gopclntab_bomb_does_not_stall_the_run_loop(void **state)
{
	struct hostile_fixture *f = *state;
	char out[600], long_name[600], budget[600], pids[3][16], want[800];
	const char *files[] = { long_name, budget };
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[0],	     "--pid", pids[1],
			       "--pid",	      pids[2], NULL };
	struct agent_proc agent;
	int port;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(long_name, sizeof(long_name), "%s/gopclntab-4mb-name.so", f->dir);
	snprintf(budget, sizeof(budget), "%s/gopclntab-60kb-name.so", f->dir);
	write_gopclntab_bomb(long_name, 500000, 4u << 20);
	write_gopclntab_bomb(budget, 500000, 60000);
	start_all(f, files, 2, pids);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(want, sizeof(want), "span hook candidate %s (pid %d) refused", budget,
		 (int)f->pids[2]);
	if (!agent_proc_wait_log(&agent, want, 30))
		fail_msg("the agent never logged \"%s\"", want);
	assert_true(wait_guard(port, "elf_section_refused", 1, 10) >= 1);
	check_windows_and_sigterm(out, &agent, 8);
}

/* Sections claiming gigabytes of files that hold a few kilobytes on disk: .gopclntab (read by
 * hook discovery), .go.buildinfo (Go version) and .eh_frame (unwind tables). */
static void test_sparse_sections_are_refused_before_allocation(void **state)
{
	static const uint8_t text[16] = { 0xc3 };
	struct hostile_fixture *f = *state;
	char out[600], pcln[600], info[600], pids[3][16], wants[3][800];
	const char *files[] = { pcln, info };
	int logged[3], i;
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[0],	     "--pid", pids[1],
			       "--pid",	      pids[2], NULL };
	uint8_t head[72] = { 0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	struct crafted_section pcln_secs[] = {
		{ ".text", SHT_PROGBITS, 0x1000, text, sizeof(text), 0 },
		{ ".gopclntab", SHT_PROGBITS, 0x100000, head, sizeof(head), 2ull << 30 },
	};
	struct crafted_section info_secs[] = {
		{ ".text", SHT_PROGBITS, 0x1000, text, sizeof(text), 0 },
		{ ".go.buildinfo", SHT_PROGBITS, 0x2000, "\xff Go buildinf:", 14, 1ull << 30 },
		{ ".eh_frame", SHT_PROGBITS, 0x3000, head, sizeof(head), 1ull << 30 },
	};
	struct agent_proc agent;
	uint64_t rss;
	int port;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(pcln, sizeof(pcln), "%s/sparse-gopclntab.so", f->dir);
	snprintf(info, sizeof(info), "%s/sparse-buildinfo-ehframe.so", f->dir);
	assert_int_equal(crafted_elf_write(pcln, pcln_secs, 2), 0);
	assert_int_equal(crafted_elf_write(info, info_secs, 3), 0);
	printf("  %s: %llu KB on disk; %s: %llu KB\n", pcln,
	       (unsigned long long)crafted_elf_disk_bytes(pcln) >> 10, info,
	       (unsigned long long)crafted_elf_disk_bytes(info) >> 10);
	assert_true(crafted_elf_disk_bytes(pcln) < (1u << 20));
	assert_true(crafted_elf_disk_bytes(info) < (1u << 20));
	start_all(f, files, 2, pids);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(wants[0], sizeof(wants[0]), "span hook candidate %s (pid %d) refused", pcln,
		 (int)f->pids[1]);
	snprintf(wants[1], sizeof(wants[1]), "span hook candidate %s (pid %d) refused", info,
		 (int)f->pids[2]);
	snprintf(wants[2], sizeof(wants[2]), "unwind table of %s not built", info);
	for (i = 0; i < 3; i++)
		logged[i] = agent_proc_wait_log(&agent, wants[i], 30);
	rss = hostile_peak_rss(agent.pid);
	printf("  agent peak RSS %llu MB (chart limit %llu MB)\n", (unsigned long long)rss >> 20,
	       CHART_MEMORY_LIMIT >> 20);
	assert_true(rss > 0 && rss < CHART_MEMORY_LIMIT);
	for (i = 0; i < 3; i++)
		if (!logged[i])
			fail_msg("the agent never logged \"%s\"", wants[i]);
	assert_true(wait_guard(port, "elf_section_refused", 3, 10) >= 3);
	check_windows_and_sigterm(out, &agent, 4);
}

/* A shared library whose one function has an FDE of `rows` CFI rows (the CFA offset alternates
 * between 16 and 8 after every 1-byte instruction). */
static void build_cfi_bomb(const char *dir, const char *lib, int rows)
{
	char src[600];
	FILE *fp;
	int i;

	snprintf(src, sizeof(src), "%s/cfi_bomb.s", dir);
	fp = fopen(src, "w");
	assert_non_null(fp);
	fputs("\t.text\n\t.globl cfi_bomb\n\t.type cfi_bomb,@function\ncfi_bomb:\n"
	      "\t.cfi_startproc\n",
	      fp);
	for (i = 0; i < rows; i++)
		fprintf(fp, "\tnop\n\t.cfi_def_cfa_offset %d\n", i & 1 ? 8 : 16);
	fputs("\tret\n\t.cfi_endproc\n\t.size cfi_bomb,.-cfi_bomb\n", fp);
	fclose(fp);
	assert_int_equal(fixture_sh("cc -shared -nostdlib -o '%s' '%s'", lib, src), 0);
}

/* Polls the agent's count of built unwind tables until it reaches want (timeout_s). */
static double wait_tables_ready(int port, double want, double timeout_s)
{
	double end = hostile_now_s() + timeout_s, ready = 0;

	while (hostile_now_s() < end) {
		if (!metrics_scrape(port, "spanprof_unwind_files{state=\"ready\"}", &ready) &&
		    ready >= want)
			break;
		usleep(100000);
	}
	return ready;
}

/* One FDE of 200,000 rows: libdw replays it from its start for each row. The worker must give
 * up on it quickly (counted and logged, the file left to frame pointers), so that a victim
 * mapping a new library after it gets that library's table at once. */
static void test_cfi_bomb_does_not_starve_table_building(void **state)
{
	static const char victim_src[] = "int victim_fn(int x) { return x * 3 + 1; }\n";
	struct hostile_fixture *f = *state;
	char out[600], lib[600], victim_lib[600], src[600], gate[600], log[600], pids[3][16];
	char want[800];
	const char *files[] = { lib };
	const char *victim[] = { f ? f->workload : NULL, "mapafter", victim_lib, gate, "60", NULL };
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[1],	     "--pid", pids[0],
			       "--pid",	      pids[2], NULL };
	struct agent_proc agent;
	double before, after, took;
	struct stat st;
	FILE *fp;
	int port;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(lib, sizeof(lib), "%s/libcfibomb.so", f->dir);
	build_cfi_bomb(f->dir, lib, 200000);
	assert_int_equal(stat(lib, &st), 0);
	printf("  %s: %lld KB\n", lib, (long long)st.st_size >> 10);
	snprintf(src, sizeof(src), "%s/victim.c", f->dir);
	snprintf(victim_lib, sizeof(victim_lib), "%s/libvictim.so", f->dir);
	snprintf(gate, sizeof(gate), "%s/victim-go", f->dir);
	fp = fopen(src, "w");
	assert_non_null(fp);
	fputs(victim_src, fp);
	fclose(fp);
	assert_int_equal(fixture_sh("cc -shared -fPIC -O2 -o '%s' '%s'", victim_lib, src), 0);
	start_all(f, files, 1, pids);
	/* A root victim that maps its own library once the bomb is queued. */
	snprintf(log, sizeof(log), "%s/victim.out", f->dir);
	f->pids[f->npids++] = unpriv_user_start(-1, "it-parsers-victim", f->dir, log, victim);
	assert_int_equal(unpriv_wait_file_has(log, "ready", 20), 0);
	snprintf(pids[2], sizeof(pids[2]), "%d", (int)f->pids[2]);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	/* Everything mapped at start (executables, libc, the loader, the hook library, the vDSO)
	 * is queued, the bomb among it; then the victim maps its library. */
	before = wait_tables_ready(port, 5, 20);
	sleep(1);
	metrics_scrape(port, "spanprof_unwind_files{state=\"ready\"}", &before);
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(unpriv_wait_file_has(log, "ready\nready", 20), 0);
	took = hostile_now_s();
	after = wait_tables_ready(port, before + 1, 15);
	took = hostile_now_s() - took;
	printf("  %.0f tables ready before the victim mapped its library, %.0f %.1f s after\n",
	       before, after, took);
	if (after < before + 1)
		fail_msg("the victim's library got no table within 15 s: the worker is held");
	snprintf(want, sizeof(want), "unwind table of %s not built: its CFI spent the build budget",
		 lib);
	if (!agent_proc_wait_log(&agent, want, 10))
		fail_msg("the agent never logged \"%s\"", want);
	assert_true(wait_guard(port, "cfi_budget_spent", 1, 10) >= 1);
	check_windows_and_sigterm(out, &agent, 3);
}

/* The file attacks together while an ordinary root service with a span hook runs: its profiles
 * arrive every window with its spans and whole native stacks, the agent stays under the chart's
 * memory limit and stops within 2 s of SIGTERM. */
static void test_parser_attacks_together_leave_a_root_service_whole(void **state)
{
	static const uint8_t text[16] = { 0xc3 };
	uint8_t head[72] = { 0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	struct crafted_section sparse[] = {
		{ ".text", SHT_PROGBITS, 0x1000, text, sizeof(text), 0 },
		{ ".gopclntab", SHT_PROGBITS, 0x100000, head, sizeof(head), 2ull << 30 },
		{ ".eh_frame", SHT_PROGBITS, 0x3000, head, sizeof(head), 1ull << 30 },
	};
	struct hostile_fixture *f = *state;
	char out[600], names[4][600], pids[5][16], want[700];
	const char *files[] = { names[0], names[1], names[2], names[3] };
	const char *argv[] = { "--output", out,	    "--interval", "1",	   "--pid",
			       pids[0],	   "--pid", pids[1],	  "--pid", pids[2],
			       "--pid",	   pids[3], "--pid",	  pids[4], NULL };
	struct agent_proc agent;
	struct census c = { 0 };
	uint64_t rss;
	double gap;
	int i, windows;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	for (i = 0; i < 4; i++)
		snprintf(names[i], sizeof(names[i]), "%s/attack%d.so", f->dir, i);
	write_gopclntab_bomb(names[0], 500000, 4u << 20);
	write_gopclntab_bomb(names[1], 500000, 60000);
	assert_int_equal(crafted_elf_write(names[2], sparse, 3), 0);
	build_cfi_bomb(f->dir, names[3], 200000);
	start_all(f, files, 4, pids);
	start_agent(f, &agent, argv);
	/* Spans set before the hook was attached are not seen: count only the windows after. */
	snprintf(want, sizeof(want), "span hook attached: %s/libspanprof.so (pid ", f->dir);
	if (!agent_proc_wait_log(&agent, want, 30))
		fail_msg("the agent never logged \"%s\"", want);
	usleep(1500000);
	assert_int_equal(fixture_sh("rm -f '%s'/*.pb.gz", out), 0);
	for (double end = hostile_now_s() + 8; hostile_now_s() < end;)
		usleep(100000);
	rss = hostile_peak_rss(agent.pid);
	windows = normal_windows(out, &gap);
	printf("  agent peak RSS %llu MB; %d windows of the normal service in 8 s, at most %.2f s "
	       "apart\n",
	       (unsigned long long)rss >> 20, windows, gap);
	assert_true(rss > 0 && rss < CHART_MEMORY_LIMIT);
	assert_true(windows >= 6);
	assert_true(gap < 1.9);
	check_windows_and_sigterm(out, &agent, 0);
	census_watch(&c, "work_in_span_0", "5a5a000000000001");
	census_watch(&c, "work_in_span_1", "5a5a000000000002");
	census_watch(&c, "spin_until", NULL);
	census_watch(&c, "span_thread", NULL);
	assert_true(census_read(&c, out, "it-parsers-normal") >= 6);
	printf("  normal service: %llu samples, %llu in work_in_span_0 (%llu with its span), "
	       "%llu of %llu spin_until samples under span_thread\n",
	       (unsigned long long)c.total_samples,
	       (unsigned long long)census_get(&c, "work_in_span_0")->samples,
	       (unsigned long long)census_get(&c, "work_in_span_0")->right_span,
	       (unsigned long long)census_get(&c, "span_thread")->samples,
	       (unsigned long long)census_get(&c, "spin_until")->samples);
	for (i = 0; i < 2; i++) {
		const struct census_func *fn = &c.funcs[i];

		assert_true(fn->samples >= 5);
		assert_true(fn->right_span >= 0.99 * fn->samples);
	}
	assert_true(census_get(&c, "span_thread")->samples >=
		    0.95 * census_get(&c, "spin_until")->samples);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gopclntab_bomb_does_not_stall_the_run_loop,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse_sections_are_refused_before_allocation,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cfi_bomb_does_not_starve_table_building, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_parser_attacks_together_leave_a_root_service_whole, setup, teardown),
	};

	/* HOSTILE_TEST=<name> runs one test; HOSTILE_KEEP=1 keeps the temp dirs (agent logs). */
	if (getenv("HOSTILE_TEST"))
		cmocka_set_test_filter(getenv("HOSTILE_TEST"));
	return cmocka_run_group_tests_name("hostile_files", tests, NULL, NULL);
}
