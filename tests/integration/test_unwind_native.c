// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Native stacks without frame pointers, end to end with real BPF: fixtures built at
 * -O2 -fomit-frame-pointer (a library chain entered through the PLT, a qsort callback, a signal
 * handler, a dlopen'ed library, a library without CFI, an exec and a thread, JIT code in
 * anonymous memory) and Debian's
 * python3.11 and ruby are profiled by one agent each (--pid); the leaf's samples must carry the
 * whole chain up to main (or start_thread). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "metrics_scrape.h"
#include "stack_chain.h"
#include "tmpdir.h"
#include "unwind_fixture.h"

#define PYTHON "/usr/bin/python3.11"
#define RUBY "/usr/bin/ruby"
/* CPU seconds each workload spends in its measured phase (about 100 samples per second). */
#define RUN_SECONDS "2"

struct fixture {
	struct unwind_fixture uf;
	int skip;
};

struct run {
	char *dir;
	char go[512]; /* the workload starts its measured phase once this file exists */
	char service[64];
	struct agent_proc agent;
	pid_t pid;
	int port;
};

static int group_setup(void **state)
{
	static struct fixture fx;

	*state = &fx;
	if (!agent_proc_can_run()) {
		fx.skip = 1;
		return 0;
	}
	return unwind_fixture_build(&fx.uf);
}

static int group_teardown(void **state)
{
	struct fixture *fx = *state;

	if (!fx->skip)
		unwind_fixture_release(&fx->uf);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Waits (at most 20 s) for the agent to log that every file pid maps has its table. */
static void wait_ready(struct run *r)
{
	char text[64];
	double end = now_s() + 20;

	snprintf(text, sizeof(text), "unwind: pid %d ready", (int)r->pid);
	while (!agent_proc_log_contains(&r->agent, text)) {
		if (now_s() > end)
			fail_msg("the agent did not log \"%s\" within 20 s", text);
		usleep(20000);
	}
}

/* Starts the workload (argv[go_arg] becomes the file it waits for), an agent for its pid, waits
 * until the unwinder knows the process, lets the workload run to its end, reads the metrics and
 * stops the agent (which flushes the last window). */
static void run_profiled(struct run *r, const char **argv, int go_arg, const char *service,
			 double *fp_frames, double *no_mapping)
{
	const char *agent_argv[] = { "--pid",
				     NULL,
				     "--output",
				     NULL,
				     "--interval",
				     "1",
				     "--log-level",
				     "debug",
				     "--metrics-addr",
				     "127.0.0.1:0",
				     "--unwind-table-bytes",
				     "16MiB",
				     NULL };
	char env_service[128], pid_text[16], out_path[600];
	const char *env[] = { env_service, NULL };
	FILE *f;

	memset(r, 0, sizeof(*r));
	r->dir = tmpdir_new("it-unwind");
	assert_non_null(r->dir);
	snprintf(r->go, sizeof(r->go), "%s/go", r->dir);
	argv[go_arg] = r->go;
	snprintf(r->service, sizeof(r->service), "%s", service);
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	snprintf(out_path, sizeof(out_path), "%s/workload.out", r->dir);
	r->pid = workload_start(argv, env, out_path);
	assert_true(r->pid > 0);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)r->pid);
	agent_argv[1] = pid_text;
	agent_argv[3] = r->dir;
	assert_int_equal(agent_proc_start(&r->agent, r->dir, agent_argv), 0);
	wait_ready(r);
	r->port = metrics_scrape_port(r->agent.log_path);
	assert_true(r->port > 0);
	f = fopen(r->go, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(workload_wait(r->pid, 60), 0);
	assert_int_equal(metrics_scrape(r->port, "spanprof_unwind_fp_frames_total", fp_frames), 0);
	assert_int_equal(
		metrics_scrape(r->port,
			       "spanprof_samples_dropped_total{reason=\"unwind_no_mapping\"}",
			       no_mapping),
		0);
	assert_int_equal(agent_proc_stop(&r->agent), 0);
}

/* Checks that >= min_pct of chain[0]'s samples carry the whole chain; the census goes to *out
 * when out is not NULL. */
static void assert_chain(struct run *r, const char *const *chain, size_t n, double min_pct,
			 struct chain_count *out)
{
	struct chain_count c;

	assert_true(chain_count(r->dir, r->service, chain, n, &c) > 0);
	if (out)
		*out = c;
	printf("# %s: %lu of %lu %s samples carry the whole chain (%lu samples in all)\n",
	       r->service, (unsigned long)c.whole, (unsigned long)c.leaf,
	       chain[0] ? chain[0] : "(any leaf)", (unsigned long)c.samples);
	assert_true(c.leaf >= 20);
	assert_true(c.whole * 100.0 >= min_pct * c.leaf);
}

/* What a run of the fixture showed. */
struct fixture_result {
	struct chain_count chain;
	double fp_frames, no_mapping; /* the unwinder's counters */
};

/* Runs the fixture executable in mode and checks that >= 99% of the leaf's samples carry the
 * chain. */
static void run_mode(void **state, const char *mode, const char *const *chain, size_t n,
		     struct fixture_result *res)
{
	struct fixture *fx = *state;
	const char *argv[] = { fx->uf.exe, mode, RUN_SECONDS, NULL, fx->uf.dl, NULL };
	char service[64], perf_map[64];
	struct run r;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "unwfix-%s-%d", mode, (int)getpid());
	run_profiled(&r, argv, 3, service, &res->fp_frames, &res->no_mapping);
	/* The JIT modes name their code in the perf map, the usual place, which outlives them
	 * so that the agent's last drain can still read it. */
	snprintf(perf_map, sizeof(perf_map), "/tmp/perf-%d.map", (int)r.pid);
	unlink(perf_map);
	assert_chain(&r, chain, n, 99.0, &res->chain);
	tmpdir_remove(r.dir);
}

/* run_mode(), and every PC was in a published mapping ([vdso], ld.so and the top of the address
 * space included), except in the warm-up after an exec or a dlopen, before the new mappings are
 * published. Returns the frames walked by frame pointer. */
static double run_fixture(void **state, const char *mode, const char *const *chain, size_t n)
{
	struct fixture_result res;

	run_mode(state, mode, chain, n, &res);
	if (strcmp(mode, "exec") && strcmp(mode, "dlopen"))
		assert_true(res.no_mapping == 0);
	return res.fp_frames;
}

/* An executable calls through the PLT into a shared library's three-deep chain. */
static void test_library_chain_through_plt_reaches_main(void **state)
{
	static const char *const chain[] = { "lib_leaf", "lib_mid", "lib_entry", "chain_driver",
					     "main" };

	run_fixture(state, "chain", chain, 5);
}

/* libc's qsort (msort, no frame pointers) calls back into the program. */
static void test_qsort_callback_reaches_main(void **state)
{
	static const char *const chain[] = { "cmp_leaf", "cmp_cb", "qsort_driver", "main" };

	run_fixture(state, "qsort", chain, 4);
}

/* A signal handler: through the kernel's signal frame (libc's __restore_rt) back to the code
 * that raised the signal. */
static void test_signal_handler_reaches_main(void **state)
{
	static const char *const chain[] = { "sig_leaf", "sig_handler", "signal_driver", "main" };

	run_fixture(state, "signal", chain, 4);
}

/* A library loaded with dlopen() after the agent attached: the measured phase starts one second
 * after the dlopen (the time the agent has to learn the new library). */
static void test_dlopened_library_reaches_main(void **state)
{
	static const char *const chain[] = { "dl_leaf", "dl_mid", "dl_entry", "dl_driver", "main" };

	run_fixture(state, "dlopen", chain, 5);
}

/* A library without CFI is walked by frame pointer, then CFI takes over again, and the frames
 * walked that way are counted. */
static void test_file_without_cfi_falls_back_to_frame_pointers(void **state)
{
	static const char *const chain[] = { "nocfi_leaf", "nocfi_mid", "nocfi_entry",
					     "nocfi_driver", "main" };

	assert_true(run_fixture(state, "nocfi", chain, 5) > 0);
}

/* A process that exec()s after the agent attached (a new image in the same pid, published again
 * within the one-second warm-up), then runs the chain on a thread: stacks end in start_thread. */
static void test_exec_then_thread_reaches_start_thread(void **state)
{
	static const char *const chain[] = { "lib_leaf", "lib_mid", "lib_entry", "chain_driver",
					     "thread_main",
					     /* unnamed where libc has no symbol table (no
					      * libc6-dbg, as on a fresh machine): the walk
					      * still reaches libc's thread entry */
					     "start_thread|[unknown] (libc.so.6)" };

	run_fixture(state, "exec", chain, 6);
}

/* JIT code that keeps frame pointers, in anonymous memory made executable with mprotect() after
 * the agent attached (the one-second warm-up is not checked): the walk steps through it by
 * frame pointer and goes on with CFI in its callers; the JIT frame is named from the perf map. */
static void test_jit_code_with_frame_pointers_reaches_main(void **state)
{
	static const char *const chain[] = { "jit_leaf", "jit_fp_tramp", "jit_caller", "jit_driver",
					     "main" };
	struct fixture_result res;

	run_mode(state, "jit", chain, 5, &res);
	assert_true(res.fp_frames > 0);
}

/* JIT code whose rbp is no frame pointer (it points at words in its caller's frame that hold no
 * code address): the walk stops at the JIT frame, counted as unwind_no_mapping, and no made-up
 * frame follows it. The code exists before the agent's first scan, so nothing else in this run
 * is outside a published mapping. */
static void test_jit_code_without_frame_pointers_stops_cleanly(void **state)
{
	static const char *const chain[] = { "jit_leaf", "jit_nofp_tramp" };
	struct fixture_result res;

	run_mode(state, "jitnofp", chain, 2, &res);
	printf("# %lu of %lu leaf samples end at the JIT frame; unwind_no_mapping %.0f\n",
	       (unsigned long)res.chain.ends, (unsigned long)res.chain.leaf, res.no_mapping);
	assert_true(res.chain.ends * 100.0 >= 99.0 * res.chain.leaf);
	assert_true(res.fp_frames > 0);
	assert_true(res.no_mapping > 0);
}

/* JIT code without frame pointer (rbp points at words that hold no code address) that returns
 * through a plain epilogue (add $16,%rsp; pop %rbp; ret), as CPython's perf trampolines do: the
 * epilogue says where the return address is, and the walk reaches main. */
static void test_jit_code_with_a_plain_epilogue_reaches_main(void **state)
{
	static const char *const chain[] = { "jit_leaf", "jit_epi_tramp", "jit_nofp_caller",
					     "jit_early_driver", "main" };
	struct fixture_result res;

	run_mode(state, "jitepi", chain, 5, &res);
	assert_true(res.fp_frames > 0);
	assert_true(res.no_mapping == 0);
}

/* Runs an interpreter (argv[go_arg] becomes the go file) and checks >= 95% of its samples reach
 * root (through via first, unless via is NULL). */
static void run_interpreter(void **state, const char **argv, int go_arg, const char *tag,
			    const char *via, const char *root)
{
	const char *const chain[] = { NULL, via ? via : root, root };
	struct fixture *fx = *state;
	double fp_frames, no_mapping;
	char service[64], perf_map[64];
	struct run r;

	if (fx->skip)
		skip();
	if (access(argv[0], X_OK))
		skip();
	snprintf(service, sizeof(service), "%s-%d", tag, (int)getpid());
	run_profiled(&r, argv, go_arg, service, &fp_frames, &no_mapping);
	snprintf(perf_map, sizeof(perf_map), "/tmp/perf-%d.map", (int)r.pid); /* -X perf's */
	unlink(perf_map);
	assert_chain(&r, chain, via ? 3 : 2, 95.0, NULL);
	assert_true(no_mapping == 0);
	tmpdir_remove(r.dir);
}

/* A Python loop that starts once the file argv[1] exists. */
static const char py_loop[] = "import os, sys, time\n"
			      "while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
			      "end = time.process_time() + " RUN_SECONDS "\n"
			      "def work(n):\n"
			      "    return sum(i * i for i in range(n))\n"
			      "while time.process_time() < end: work(10000)\n";

/* Debian's python3.11 (no frame pointers anywhere) running a loop: Py_BytesMain is main's
 * callee (main itself is not in the stripped executable's symbols). */
static void test_python311_samples_reach_main(void **state)
{
	const char *argv[] = { PYTHON, "-c", py_loop, NULL, NULL };

	run_interpreter(state, argv, 3, "py311", NULL, "Py_BytesMain");
}

/* pyenv's CPython 3.12 with -X perf: every Python call goes through a trampoline the
 * interpreter writes into anonymous memory (and mprotect()s executable), which keeps no frame
 * pointer but returns through add $8,%rsp; ret. The walk goes through them to main. */
static void test_python312_perf_trampolines_reach_main(void **state)
{
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	const char *argv[] = { NULL, "-X", "perf", "-c", py_loop, NULL, NULL };
	char python[512];

	snprintf(python, sizeof(python), "%s/versions/3.12.1/bin/python3.12", root);
	argv[0] = python;
	run_interpreter(state, argv, 5, "py312perf", "py_trampoline_evaluator", "Py_BytesMain");
}

/* Debian's ruby 3.1 (libruby without frame pointers, TLS through ld.so's __tls_get_addr). */
static void test_ruby_samples_reach_main(void **state)
{
	static const char script[] = "until File.exist?(ARGV[0]); sleep 0.01; end\n"
				     "cpu = Process::CLOCK_PROCESS_CPUTIME_ID\n"
				     "e = Process.clock_gettime(cpu) + " RUN_SECONDS "\n"
				     "def w(n); s = 0; n.times { |i| s += i * i }; s; end\n"
				     "w(10000) while Process.clock_gettime(cpu) < e\n";
	/* Without rubygems the interpreter is ready (and waiting) within milliseconds. */
	const char *argv[] = { RUBY, "--disable-gems", "-e", script, NULL, NULL };

	run_interpreter(state, argv, 4, "ruby", NULL, "ruby_run_node");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_chain_through_plt_reaches_main),
		cmocka_unit_test(test_qsort_callback_reaches_main),
		cmocka_unit_test(test_signal_handler_reaches_main),
		cmocka_unit_test(test_dlopened_library_reaches_main),
		cmocka_unit_test(test_file_without_cfi_falls_back_to_frame_pointers),
		cmocka_unit_test(test_exec_then_thread_reaches_start_thread),
		cmocka_unit_test(test_jit_code_with_frame_pointers_reaches_main),
		cmocka_unit_test(test_jit_code_without_frame_pointers_stops_cleanly),
		cmocka_unit_test(test_jit_code_with_a_plain_epilogue_reaches_main),
		cmocka_unit_test(test_python311_samples_reach_main),
		cmocka_unit_test(test_python312_perf_trampolines_reach_main),
		cmocka_unit_test(test_ruby_samples_reach_main),
	};

	if (getenv("UNWIND_TEST")) /* e.g. UNWIND_TEST='test_jit*' while iterating */
		cmocka_set_test_filter(getenv("UNWIND_TEST"));
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
