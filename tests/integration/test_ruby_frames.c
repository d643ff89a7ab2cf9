// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF and Debian's ruby: a script alternates two spans through the
 * project's Ruby binding, each running a named method that calls a hot one (handle_order ->
 * parse_order, handle_cart -> price_cart); then two threads run one span each, one of them in a
 * C extension (Zlib.crc32). The profiles must show, read by BPF from the interpreter's control
 * frames, each span's Ruby methods in call order with the script's path and a line of the hot
 * method, under the right span; each thread its own stack; the extension's native frames (libz)
 * under the Ruby method that called it. One agent per run, watching only that process.
 * The same runs on Debian 12's Ruby 3.1 here and on the newer Rubies of a Debian 13 root
 * (.ci/ruby-root.sh): their libruby needs a newer glibc, so they run chrooted there, in a mount
 * namespace of their own, with the checkout bound in at another path, as in a container; the
 * agent on this machine must find their files through /proc/PID/root. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pprof_file.h"
#include "profiled_run.h"
#include "root_exec.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
#define SCRIPT "rb_spans.rb"
#define SECONDS "3"
#define NATIVE_LIB "/libz.so"
#define MIN_SHOWN 0.95
/* The Debian 13 root (SPANPROF_RUBY_ROOT overrides), and where the checkout shows inside it. */
#define RUBY_ROOT "/var/lib/spanprof-test/trixie-ruby"
#define IN_ROOT_TOP "/spanprof"

/* The Ruby a run uses: Debian 12's here, or one of a Debian 13 root's. */
struct ruby_env {
	const char *root; /* NULL: this machine */
	char ruby[32]; /* the interpreter, a path inside root */
	const char *version; /* "3.1": the agent must say it reads CRuby 3.1.x frames */
	char top[PATH_MAX]; /* the checkout as the workload sees it */
	char build[PATH_MAX]; /* the build directory as the workload sees it */
	struct root_bind binds[2];
	char host_top[PATH_MAX];
};

/* One span's expectations: its Ruby call chain (innermost first, consecutive frames), the hot
 * method's lines in the script, and what the profiles showed. */
struct span_check {
	const char *span;
	const char *chain[4];
	int first_line, last_line;
	uint64_t span_samples; /* samples labelled with this span, less in_binding */
	uint64_t in_binding; /* ... taken inside the binding's own set_span/clear_span call */
	uint64_t shown; /* ... whose stack has the chain in order, with path and a hot line */
	uint64_t hot_samples; /* samples whose stack has chain[0], any span */
	uint64_t hot_right_span; /* ... labelled with this span */
	uint64_t hot_other_span; /* ... labelled with another span */
	const char *native_lib; /* the library the hot method's C call runs in, or NULL */
	uint64_t native_leaf; /* shown samples whose leaf frame is in native_lib */
	const char *callee; /* the C method chain[0] calls there (named from the ID), or NULL */
	uint64_t callee_shown; /* native_leaf samples with callee right inside chain[0] */
	int misses_printed; /* span samples without the chain printed so far */
};

#define MAX_MISSES_PRINTED 3
/* The span is set before the binding's set_span call returns and cleared inside clear_span, so
 * samples there carry it while running the binding, not the span's methods: they are counted
 * apart, and must stay a small share (a loaded machine makes the uprobe slower). */
#define MAX_IN_BINDING 0.2

static int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The function, file and line of the sample's frame at depth (its innermost line). */
static const Perftools__Profiles__Line *frame_line(const Perftools__Profiles__Profile *p,
						   const Perftools__Profiles__Sample *s, long depth)
{
	const Perftools__Profiles__Location *loc;

	if (depth < 0 || (size_t)depth >= s->n_location_id)
		return NULL;
	loc = pprof_location(p, s->location_id[depth]);
	return loc && loc->n_line ? loc->line[0] : NULL;
}

/* The file of the mapping of the sample's leaf frame. */
static const char *leaf_mapping(const Perftools__Profiles__Profile *p,
				const Perftools__Profiles__Sample *s)
{
	const Perftools__Profiles__Location *loc =
		s->n_location_id ? pprof_location(p, s->location_id[0]) : NULL;
	const Perftools__Profiles__Mapping *m = loc ? pprof_mapping(p, loc->mapping_id) : NULL;

	return m ? pprof_str(p, m->filename) : NULL;
}

static int frame_named(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		       long depth, const char *name)
{
	const Perftools__Profiles__Line *l = frame_line(p, s, depth);
	const Perftools__Profiles__Function *f = l ? pprof_function(p, l->function_id) : NULL;

	return f && !strcmp(pprof_str(p, f->name) ?: "", name);
}

static int shows_chain(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		       const struct span_check *c)
{
	long d = pprof_sample_function_depth(p, s, c->chain[0], 0);
	const Perftools__Profiles__Line *l = frame_line(p, s, d);
	const Perftools__Profiles__Function *f;
	int i;

	if (!l || l->line < c->first_line || l->line > c->last_line)
		return 0;
	for (i = 0; i < 4; i++) {
		l = frame_line(p, s, d + i);
		f = l ? pprof_function(p, l->function_id) : NULL;
		if (!f || strcmp(pprof_str(p, f->name) ?: "", c->chain[i]) ||
		    !ends_with(pprof_str(p, f->filename), "/" SCRIPT))
			return 0;
	}
	return 1;
}

/* A span sample that does not show the chain, frame by frame, for the log. */
static void print_miss(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		       struct span_check *c)
{
	const Perftools__Profiles__Line *l;
	const Perftools__Profiles__Function *f;
	size_t d;

	if (c->misses_printed++ >= MAX_MISSES_PRINTED)
		return;
	printf("    %s: a sample without %s <- %s:", c->span, c->chain[0], c->chain[1]);
	for (d = 0; d < s->n_location_id; d++) {
		l = frame_line(p, s, d);
		f = l ? pprof_function(p, l->function_id) : NULL;
		printf(" %s:%lld", f ? pprof_str(p, f->name) ?: "?" : "?",
		       l ? (long long)l->line : 0);
	}
	printf("\n");
}

static void count_sample(const Perftools__Profiles__Profile *p,
			 const Perftools__Profiles__Sample *s, struct span_check *c,
			 const char *span, uint64_t w)
{
	int mine = span && !strcmp(span, c->span), shown = mine && shows_chain(p, s, c);
	const char *leaf = leaf_mapping(p, s);

	if (mine && !shown &&
	    (pprof_sample_has_function(p, s, "set_span") ||
	     pprof_sample_has_function(p, s, "clear_span"))) {
		c->in_binding += w;
		return;
	}
	c->span_samples += mine ? w : 0;
	c->shown += shown ? w : 0;
	if (mine && !shown)
		print_miss(p, s, c);
	if (shown && c->native_lib && leaf && strstr(leaf, c->native_lib)) {
		c->native_leaf += w;
		if (c->callee &&
		    frame_named(p, s, pprof_sample_function_depth(p, s, c->chain[0], 0) - 1,
				c->callee))
			c->callee_shown += w;
	}
	if (!pprof_sample_has_function(p, s, c->chain[0]))
		return;
	c->hot_samples += w;
	c->hot_right_span += mine ? w : 0;
	c->hot_other_span += span && !mine ? w : 0;
}

struct span_checks {
	struct span_check *checks;
	size_t n;
	uint64_t *total;
};

static void count_file(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct span_checks *c = ctx;
	const Perftools__Profiles__Sample *s;
	const char *span;
	uint64_t w;
	size_t i, k;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		w = s->n_value && p->period > 0 ? s->value[0] / p->period : 0;
		span = pprof_sample_label(p, s, "span_id");
		*c->total += w;
		for (k = 0; k < c->n; k++)
			count_sample(p, s, &c->checks[k], span, w);
	}
}

/* Reads every profile of service in dir; returns the number of files. */
static int count_profiles(const char *dir, const char *service, struct span_check *checks, size_t n,
			  uint64_t *total)
{
	struct span_checks c = { checks, n, total };
	int files = pprof_file_each(dir, service, NULL, count_file, &c);

	assert_true(files >= 0);
	return files;
}

static void assert_span(const struct span_check *c)
{
	printf("    %s: %llu span samples, %llu with %s <- %s <- ... and a hot line; %s in %llu "
	       "samples, %llu in its span, %llu in another\n",
	       c->span, (unsigned long long)c->span_samples, (unsigned long long)c->shown,
	       c->chain[0], c->chain[1], c->chain[0], (unsigned long long)c->hot_samples,
	       (unsigned long long)c->hot_right_span, (unsigned long long)c->hot_other_span);
	printf("    %s: %llu more span samples inside the binding's set_span/clear_span\n", c->span,
	       (unsigned long long)c->in_binding);
	assert_true(c->span_samples >= PROFILED_MIN_SAMPLES);
	assert_true(c->shown >= MIN_SHOWN * c->span_samples);
	assert_true(c->in_binding <= MAX_IN_BINDING * (c->span_samples + c->in_binding));
	assert_true(c->hot_right_span >= MIN_SHOWN * c->hot_samples);
	/* A thread's method never shows under another thread's span: each its own stack. */
	assert_int_equal(c->hot_other_span, 0);
	if (!c->native_lib)
		return;
	printf("    %s: %llu of those samples in %s's native code\n", c->span,
	       (unsigned long long)c->native_leaf, c->native_lib + 1);
	assert_true(c->native_leaf >= 0.5 * c->shown);
	printf("    %s: %llu of those with the C method %s named right inside %s\n", c->span,
	       (unsigned long long)c->callee_shown, c->callee, c->chain[0]);
	assert_true(c->callee_shown >= MIN_SHOWN * c->native_leaf);
}

static int can_run(void)
{
	if (!agent_proc_can_run())
		return 0;
#if defined(__SANITIZE_ADDRESS__)
	printf("  skip: ruby cannot load the ASan-built hook library (make test runs this)\n");
	return 0;
#endif
	return 1;
}

/* Debian 12's ruby on this machine; 0 (after saying why) when it cannot run. */
static int host_ruby(struct ruby_env *env)
{
	memset(env, 0, sizeof(*env));
	if (!can_run())
		return 0;
	if (access("/usr/bin/ruby", X_OK)) {
		printf("  skip: no /usr/bin/ruby (scripts/setup-debian.sh installs it)\n");
		return 0;
	}
	snprintf(env->ruby, sizeof(env->ruby), "/usr/bin/ruby");
	env->version = "3.1";
	snprintf(env->build, sizeof(env->build), "%s", build_path("."));
	snprintf(env->top, sizeof(env->top), "%s", build_path(".."));
	return 1;
}

/* ruby<version> of the Debian 13 root, with the checkout bound in at IN_ROOT_TOP; 0 (after
 * saying why) when there is no such root or Ruby. */
static int root_ruby(struct ruby_env *env, const char *version)
{
	const char *root = getenv("SPANPROF_RUBY_ROOT") ?: RUBY_ROOT;
	char path[PATH_MAX + 64], build[PATH_MAX];

	memset(env, 0, sizeof(*env));
	if (!can_run())
		return 0;
	snprintf(env->ruby, sizeof(env->ruby), "/usr/bin/ruby%s", version);
	snprintf(path, sizeof(path), "%s%s", root, env->ruby);
	if (access(path, X_OK)) {
		printf("  skip: no %s: the Debian 13 root (.ci/ruby-root.sh, run by "
		       "scripts/setup-debian.sh) is missing or has no Ruby %s%s\n",
		       path, version,
		       strcmp(version, "3.4") ?
			       "" :
			       " (Debian has it only in experimental; whether it "
			       "installed: /var/cache/spanprof-ci/trixie-ruby.log)");
		return 0;
	}
	if (!realpath(build_path("."), build)) {
		printf("  skip: cannot resolve the build directory %s\n", build_path("."));
		return 0;
	}
	env->root = root;
	env->version = version;
	snprintf(env->host_top, sizeof(env->host_top), "%s", build);
	dirname(env->host_top);
	env->binds[0] = (struct root_bind){ env->host_top, IN_ROOT_TOP };
	snprintf(env->top, sizeof(env->top), "%s", IN_ROOT_TOP);
	snprintf(env->build, sizeof(env->build), IN_ROOT_TOP "/%s", basename(build));
	return 1;
}

/* Runs the workload in mode with env's Ruby under its own agent (frames 0:
 * --interpreter-frames=false) and counts its profiles into checks[0..1]. */
static void run_ruby(const struct ruby_env *env, const char *mode, int frames,
		     struct span_check *checks)
{
	char env_service[96], env_lib[4400], env_rb[4400], service[64], script[PATH_MAX + 64],
		hook[PATH_MAX + 32], version_log[64], *dir;
	const char *envp[] = { env_service, env_lib, env_rb, NULL };
	const char *wargv[] = { env->ruby, script, mode, SECONDS, NULL };
	const char *args[] = {
		"--output", NULL, "--interval", "1", frames ? NULL : "--interpreter-frames=false",
		NULL
	};
	struct profiled_run r = { .agent_args = args,
				  .workload_argv = wargv,
				  .workload_env = envp,
				  .hook_file = hook,
				  .root = env->root,
				  .root_binds = env->binds };
	uint64_t total = 0;
	int files;

	dir = tmpdir_new("it-rb");
	assert_non_null(dir);
	r.dir = args[1] = dir;
	snprintf(script, sizeof(script), "%s/tests/workloads/" SCRIPT, env->top);
	snprintf(hook, sizeof(hook), "%s/libspanprof.so", env->build);
	snprintf(service, sizeof(service), "it-rb-%d", getpid());
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	snprintf(env_lib, sizeof(env_lib), "SPANPROF_LIBRARY=%s", hook);
	snprintf(env_rb, sizeof(env_rb), "SPANPROF_RUBY_LIB=%s/hooks/ruby/lib", env->top);
	assert_int_equal(profiled_run(&r), 0);
	snprintf(version_log, sizeof(version_log), "reading CRuby %s.", env->version);
	assert_int_equal(agent_proc_log_contains(&r.agent, version_log), frames);
	files = count_profiles(dir, service, checks, 2, &total);
	printf("  ruby %s %s%s: %.2f CPU s, %llu samples in %d profiles\n", env->version, mode,
	       env->root ? " (under the Debian 13 root)" : "", r.cpu_s, (unsigned long long)total,
	       files);
	assert_true(files > 0);
	assert_true(total <= PROFILED_RATE_MAX * PROFILED_HZ * r.cpu_s);
	tmpdir_remove(dir);
}

/* One span per method pair on one thread: each span's samples show its methods in order. */
static void check_methods_in_spans(const struct ruby_env *env)
{
	struct span_check checks[] = {
		{ .span = SPAN_1,
		  .chain = { "parse_order", "handle_order", "block in <main>", "in_span" },
		  .first_line = 21,
		  .last_line = 29 },
		{ .span = SPAN_2,
		  .chain = { "price_cart", "handle_cart", "block in <main>", "in_span" },
		  .first_line = 33,
		  .last_line = 41 },
	};

	run_ruby(env, "spans", 1, checks);
	assert_span(&checks[0]);
	assert_span(&checks[1]);
}

/* Two threads, a span each: each thread's own stack; the C extension's frames under its caller. */
static void check_threads_and_c_extension(const struct ruby_env *env)
{
	struct span_check checks[] = {
		{ .span = SPAN_1,
		  .chain = { "parse_order", "block in thread_one", "in_span", "thread_one" },
		  .first_line = 21,
		  .last_line = 29 },
		{ .span = SPAN_2,
		  .chain = { "checksum_cart", "block in thread_two", "in_span", "thread_two" },
		  .first_line = 45,
		  .last_line = 47,
		  .native_lib = NATIVE_LIB,
		  .callee = "crc32" },
	};

	run_ruby(env, "threads", 1, checks);
	assert_span(&checks[0]);
	assert_span(&checks[1]);
}

static void test_debian_ruby_methods_in_spans(void **state)
{
	struct ruby_env env;

	(void)state;
	if (!host_ruby(&env))
		skip();
	check_methods_in_spans(&env);
}

static void test_debian_ruby_threads_and_c_extension(void **state)
{
	struct ruby_env env;

	(void)state;
	if (!host_ruby(&env))
		skip();
	check_threads_and_c_extension(&env);
}

static void test_ruby33_root_methods_in_spans(void **state)
{
	struct ruby_env env;

	(void)state;
	if (!root_ruby(&env, "3.3"))
		skip();
	check_methods_in_spans(&env);
}

static void test_ruby33_root_threads_and_c_extension(void **state)
{
	struct ruby_env env;

	(void)state;
	if (!root_ruby(&env, "3.3"))
		skip();
	check_threads_and_c_extension(&env);
}

static void test_ruby34_root_methods_in_spans(void **state)
{
	struct ruby_env env;

	(void)state;
	if (!root_ruby(&env, "3.4"))
		skip();
	check_methods_in_spans(&env);
}

static void test_ruby34_root_threads_and_c_extension(void **state)
{
	struct ruby_env env;

	(void)state;
	if (!root_ruby(&env, "3.4"))
		skip();
	check_threads_and_c_extension(&env);
}

/* --interpreter-frames=false: the spans' samples keep their span labels, and no sample shows a Ruby
 * method (native frames only: vm_exec_core and friends). */
static void test_debian_ruby_native_only(void **state)
{
	struct span_check checks[] = {
		{ .span = SPAN_1, .chain = { "parse_order", "handle_order" } },
		{ .span = SPAN_2, .chain = { "price_cart", "handle_cart" } },
	};
	struct ruby_env env;
	size_t i;

	(void)state;
	if (!host_ruby(&env))
		skip();
	run_ruby(&env, "spans", 0, checks);
	for (i = 0; i < 2; i++) {
		printf("    %s: %llu span samples, %llu showing %s\n", checks[i].span,
		       (unsigned long long)checks[i].span_samples,
		       (unsigned long long)checks[i].hot_samples, checks[i].chain[0]);
		assert_true(checks[i].span_samples >= PROFILED_MIN_SAMPLES);
		assert_int_equal(checks[i].hot_samples, 0);
		assert_int_equal(checks[i].shown, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_ruby_methods_in_spans),
		cmocka_unit_test(test_debian_ruby_threads_and_c_extension),
		cmocka_unit_test(test_debian_ruby_native_only),
		cmocka_unit_test(test_ruby33_root_methods_in_spans),
		cmocka_unit_test(test_ruby33_root_threads_and_c_extension),
		cmocka_unit_test(test_ruby34_root_methods_in_spans),
		cmocka_unit_test(test_ruby34_root_threads_and_c_extension),
	};

	return cmocka_run_group_tests_name("ruby_frames", tests, NULL, NULL);
}
