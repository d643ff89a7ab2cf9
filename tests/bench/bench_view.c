// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: `spanprof view` on one hour of a busy node's output, generated here (20 services,
 * a window every 15 s, CPU and off-CPU profiles of 1,000 and 500 span-labelled samples each,
 * 200 spans a second in span logs, half of each log rotated to .1), against a baseline of one
 * window of one service, in the same run: the viewer's start-up, its API answers (span table,
 * a span's profile, a span name's profile), and, where headless Chromium and playwright-core
 * are installed, the time from navigation to the painted span table and from a click to the
 * painted flame graph (tests/view/bench_paint.cjs). The goal is under 1 s for both paints.
 * BENCH_VIEW_SERVICES, BENCH_VIEW_WINDOWS and BENCH_VIEW_SPANS_PER_S change the size. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "agent_proc.h"
#include "proto/profile.pb-c.h"
#include "tmpdir.h"

#define WINDOW_S 15
#define FUNCS 200
#define STACKS 64
#define MAX_DEPTH 30
#define NAMES 8
#define CPU_SAMPLES 1000
#define OFF_SAMPLES 500
#define T0_S 1764000000LL /* 2025-11-24T16:00:00Z */

struct gen {
	char *dir;
	int services, windows, spans_per_window; /* spans of one service in one window */
	uint64_t seed;
	uint64_t files, bytes, spans;
	/* The span that the table lists first (the slowest), and a span name. */
	char slowest_id[17];
	uint64_t slowest_wall;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(struct gen *g)
{
	g->seed ^= g->seed << 13;
	g->seed ^= g->seed >> 7;
	g->seed ^= g->seed << 17;
	return g->seed;
}

static uint64_t span_id_of(int svc, int w, int j)
{
	return ((uint64_t)(svc + 1) << 48) | ((uint64_t)w << 24) | (uint64_t)(j + 1);
}

/* The span's wall time: a few slow ones among many fast ones. */
static uint64_t wall_of(uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (h >> 60) == 0 ? 200000000 + (h >> 20) % 800000000 : 1000000 + (h >> 20) % 50000000;
}

static int gzip_to(const char *path, const uint8_t *raw, size_t n, uint64_t *bytes)
{
	gzFile f = gzopen(path, "wb1");
	int ok;

	if (!f)
		return -1;
	struct stat st;

	ok = gzwrite(f, raw, (unsigned int)n) == (int)n;
	ok &= gzclose(f) == Z_OK;
	if (ok && !stat(path, &st))
		*bytes += (uint64_t)st.st_size;
	return ok ? 0 : -1;
}

/* Everything one profile file needs, reused from file to file. */
struct pbuf {
	char **strs;
	size_t nstrs;
	Perftools__Profiles__Function fn[FUNCS], *fns[FUNCS];
	Perftools__Profiles__Line ln[FUNCS], *lnp[FUNCS];
	Perftools__Profiles__Location loc[FUNCS], *locs[FUNCS];
	uint64_t stacks[STACKS][MAX_DEPTH];
	size_t depth[STACKS];
	Perftools__Profiles__Sample smp[CPU_SAMPLES], *smps[CPU_SAMPLES];
	Perftools__Profiles__Label lab[CPU_SAMPLES][2], *labs[CPU_SAMPLES][2];
	int64_t values[CPU_SAMPLES];
	uint8_t *raw;
	size_t raw_cap;
};

enum { S_EMPTY, S_TYPE, S_NS, S_SPAN_ID, S_SPAN_NAME, S_FUNCS };
#define S_FILES (S_FUNCS + FUNCS)
#define S_NAMES (S_FILES + 20)
#define S_SPANS (S_NAMES + NAMES)

static int pbuf_init(struct pbuf *b, struct gen *g, int svc)
{
	size_t i, d;

	b->nstrs = S_SPANS + (size_t)g->spans_per_window;
	b->strs = calloc(b->nstrs, sizeof(*b->strs));
	if (!b->strs)
		return -1;
	for (i = 0; i < b->nstrs; i++)
		b->strs[i] = calloc(1, 64);
	b->strs[S_NS] = strcpy(b->strs[S_NS], "nanoseconds");
	strcpy(b->strs[S_SPAN_ID], "span_id");
	strcpy(b->strs[S_SPAN_NAME], "span_name");
	for (i = 0; i < FUNCS; i++) {
		snprintf(b->strs[S_FUNCS + i], 64, i ? "svc%02d.handler_%03zu" : "main", svc, i);
		perftools__profiles__function__init(&b->fn[i]);
		b->fn[i].id = i + 1;
		b->fn[i].name = S_FUNCS + i;
		b->fn[i].filename = S_FILES + i % 20;
		b->fns[i] = &b->fn[i];
		perftools__profiles__line__init(&b->ln[i]);
		b->ln[i].function_id = i + 1;
		b->ln[i].line = 10 + i;
		b->lnp[i] = &b->ln[i];
		perftools__profiles__location__init(&b->loc[i]);
		b->loc[i].id = i + 1;
		b->loc[i].n_line = 1;
		b->loc[i].line = &b->lnp[i];
		b->locs[i] = &b->loc[i];
	}
	for (i = 0; i < 20; i++)
		snprintf(b->strs[S_FILES + i], 64, "svc%02d/module_%02zu.c", svc, i);
	for (i = 0; i < NAMES; i++)
		snprintf(b->strs[S_NAMES + i], 64, "GET /svc%02d/route%zu", svc, i);
	/* Stacks leaf first, main last. */
	for (i = 0; i < STACKS; i++) {
		b->depth[i] = 8 + rnd(g) % (MAX_DEPTH - 8);
		for (d = 0; d + 1 < b->depth[i]; d++)
			b->stacks[i][d] = 2 + rnd(g) % (FUNCS - 1);
		b->stacks[i][d] = 1;
	}
	for (i = 0; i < CPU_SAMPLES; i++) {
		perftools__profiles__sample__init(&b->smp[i]);
		perftools__profiles__label__init(&b->lab[i][0]);
		perftools__profiles__label__init(&b->lab[i][1]);
		b->lab[i][0].key = S_SPAN_ID;
		b->lab[i][1].key = S_SPAN_NAME;
		b->labs[i][0] = &b->lab[i][0];
		b->labs[i][1] = &b->lab[i][1];
		b->smp[i].n_label = 2;
		b->smp[i].label = b->labs[i];
		b->smp[i].n_value = 1;
		b->smp[i].value = &b->values[i];
		b->smps[i] = &b->smp[i];
	}
	return 0;
}

static void pbuf_release(struct pbuf *b)
{
	size_t i;

	for (i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->raw);
}

static int write_profile(struct gen *g, struct pbuf *b, int svc, int w, int off_cpu)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vts = &vt;
	size_t i, n = off_cpu ? OFF_SAMPLES : CPU_SAMPLES, t, size;
	char path[1024], stamp[32];
	time_t start = (time_t)(T0_S + (long long)w * WINDOW_S);
	struct tm tm;
	int j;

	strcpy(b->strs[S_TYPE], off_cpu ? "off_cpu" : "cpu");
	for (j = 0; j < g->spans_per_window; j++)
		snprintf(b->strs[S_SPANS + j], 64, "%016llx",
			 (unsigned long long)span_id_of(svc, w, j));
	for (i = 0; i < n; i++) {
		j = (int)(rnd(g) % (uint64_t)g->spans_per_window);
		t = rnd(g) % STACKS;
		b->smp[i].location_id = b->stacks[t];
		b->smp[i].n_location_id = b->depth[t];
		b->lab[i][0].str = S_SPANS + j;
		b->lab[i][1].str = S_NAMES + j % NAMES;
		b->values[i] = off_cpu ? (int64_t)(1000000 + rnd(g) % 50000000) : 10000000;
	}
	vt.type = S_TYPE;
	vt.unit = S_NS;
	p.n_sample_type = 1, p.sample_type = &vts;
	p.n_sample = n, p.sample = b->smps;
	p.n_location = FUNCS, p.location = b->locs;
	p.n_function = FUNCS, p.function = b->fns;
	p.n_string_table = b->nstrs, p.string_table = b->strs;
	p.time_nanos = (int64_t)start * 1000000000LL;
	p.duration_nanos = WINDOW_S * 1000000000LL;
	size = perftools__profiles__profile__get_packed_size(&p);
	if (size > b->raw_cap) {
		free(b->raw);
		b->raw_cap = size * 2;
		b->raw = malloc(b->raw_cap);
		if (!b->raw)
			return -1;
	}
	perftools__profiles__profile__pack(&p, b->raw);
	gmtime_r(&start, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(path, sizeof(path), "%s/%s.000Z-%06d-svc%02d%s.pb.gz", g->dir, stamp,
		 2 * (w * g->services + svc) + off_cpu, svc, off_cpu ? ".off_cpu" : "");
	g->files++;
	return gzip_to(path, b->raw, size, &g->bytes);
}

/* The service's span records, the first half of the hour in the rotated .1 file. */
static int write_spans(struct gen *g, int svc, int w, FILE *f)
{
	uint64_t id, wall, cpu;
	int j;

	for (j = 0; j < g->spans_per_window; j++) {
		id = span_id_of(svc, w, j);
		wall = wall_of(id);
		cpu = wall / (2 + rnd(g) % 4);
		fprintf(f,
			"{\"service\":\"svc%02d\",\"name\":\"GET /svc%02d/route%d\",\"trace_id\":"
			"\"%016llx%016llx\",\"span_id\":\"%016llx\",\"cpu_ns\":%llu,\"off_cpu_ns\":%llu,"
			"\"wall_ns\":%llu,\"start_ns\":%llu,\"pid\":%d,\"tid\":%d}\n",
			svc, svc, j % NAMES, (unsigned long long)rnd(g), (unsigned long long)id,
			(unsigned long long)id, (unsigned long long)cpu,
			(unsigned long long)(wall - cpu), (unsigned long long)wall,
			(unsigned long long)((T0_S + (long long)w * WINDOW_S) * 1000000000LL +
					     rnd(g) % (WINDOW_S * 1000000000ULL -
						       wall % 1000000000ULL)),
			1000 + svc, 2000 + j % 64);
		g->spans++;
		if (wall > g->slowest_wall) {
			g->slowest_wall = wall;
			snprintf(g->slowest_id, sizeof(g->slowest_id), "%016llx",
				 (unsigned long long)id);
		}
	}
	return ferror(f) ? -1 : 0;
}

static int generate(struct gen *g)
{
	char path[1024];
	struct pbuf *b = calloc(1, sizeof(*b));
	FILE *logs[2];
	int svc, w, err = 0;

	for (svc = 0; svc < g->services && !err && b; svc++) {
		snprintf(path, sizeof(path), "%s/svc%02d.spans.jsonl.1", g->dir, svc);
		logs[0] = fopen(path, "w");
		snprintf(path, sizeof(path), "%s/svc%02d.spans.jsonl", g->dir, svc);
		logs[1] = fopen(path, "w");
		err = !logs[0] || !logs[1] || pbuf_init(b, g, svc);
		for (w = 0; w < g->windows && !err; w++)
			err = write_profile(g, b, svc, w, 0) || write_profile(g, b, svc, w, 1) ||
			      write_spans(g, svc, w, logs[w >= g->windows / 2]);
		if (logs[0])
			fclose(logs[0]);
		if (logs[1])
			fclose(logs[1]);
		pbuf_release(b);
		memset(b, 0, sizeof(*b));
	}
	free(b);
	return err || !b ? -1 : 0;
}

struct viewer {
	pid_t pid;
	char url[128];
	double start_s; /* from exec to the URL line: the directory read */
};

static int viewer_start(struct viewer *v, const char *dir)
{
	struct pollfd pfd;
	double t0 = now_s();
	int fds[2], n = 0;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(stdout);
	v->pid = fork();
	if (v->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(fds[1], 1);
		execl(build_path("spanprof"), "spanprof", "view", dir, "--port", "0", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	while (n + 1 < (int)sizeof(v->url) && poll(&pfd, 1, 300000) == 1 &&
	       read(fds[0], &c, 1) == 1 && c != '\n')
		v->url[n++] = c;
	v->url[n] = '\0';
	close(fds[0]);
	v->start_s = now_s() - t0;
	return n ? 0 : -1;
}

/* Peak resident memory of the viewer, in MiB. */
static double viewer_peak_mib(const struct viewer *v)
{
	char path[64], line[256];
	double kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", v->pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lf", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb / 1024;
}

static void viewer_stop(struct viewer *v)
{
	kill(v->pid, SIGINT);
	workload_wait(v->pid, 30);
}

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	*(size_t *)arg += size * n;
	return size * n;
}

/* Seconds for one GET of url + path (its body counted, then dropped); -1 on failure. */
static double get_s(const char *url, const char *path, size_t *bytes)
{
	char full[512];
	CURL *c = curl_easy_init();
	double t0 = now_s(), t;
	long code = 0;

	*bytes = 0;
	snprintf(full, sizeof(full), "%s%s", url, path + 1);
	curl_easy_setopt(c, CURLOPT_URL, full);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, bytes);
	t = curl_easy_perform(c) == CURLE_OK ? now_s() - t0 : -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return code == 200 ? t : -1;
}

struct result {
	double start_s, spans_s, span_profile_s, name_profile_s, peak_mib;
	double paint_table_ms, paint_span_ms, paint_name_ms; /* medians; -1: no browser */
	size_t spans_bytes, profile_bytes;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The medians of bench_paint.cjs's rounds, or -1 when the browser cannot run. */
static void paint(const char *url, struct result *r)
{
	double t[3][5];
	char cmd[1024], line[256];
	int n = 0;
	FILE *f;

	r->paint_table_ms = r->paint_span_ms = r->paint_name_ms = -1;
	snprintf(cmd, sizeof(cmd), "node %s %s 5 2>&1", build_path("../tests/view/bench_paint.cjs"),
		 url);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (n < 5 && sscanf(line, "table_ms=%lf span_flame_ms=%lf name_flame_ms=%lf",
				    &t[0][n], &t[1][n], &t[2][n]) == 3)
			n++;
		else
			printf("  bench_paint: %s", line);
	}
	if (f)
		pclose(f);
	if (!n)
		return;
	qsort(t[0], n, sizeof(double), cmp_double);
	qsort(t[1], n, sizeof(double), cmp_double);
	qsort(t[2], n, sizeof(double), cmp_double);
	r->paint_table_ms = t[0][n / 2];
	r->paint_span_ms = t[1][n / 2];
	r->paint_name_ms = t[2][n / 2];
}

static int measure(struct gen *g, struct result *r)
{
	char path[256];
	struct viewer v;
	size_t bytes;

	if (viewer_start(&v, g->dir))
		return -1;
	r->start_s = v.start_s;
	r->spans_s = get_s(v.url, "/api/spans?sort=wall&order=desc&limit=500", &r->spans_bytes);
	snprintf(path, sizeof(path), "/api/profile?span_id=%s", g->slowest_id);
	r->span_profile_s = get_s(v.url, path, &r->profile_bytes);
	r->name_profile_s =
		get_s(v.url, "/api/profile?service=svc00&name=GET%20/svc00/route0", &bytes);
	/* The page, after a restart: every profile read cold again. */
	viewer_stop(&v);
	if (viewer_start(&v, g->dir))
		return -1;
	paint(v.url, r);
	r->peak_mib = viewer_peak_mib(&v);
	viewer_stop(&v);
	return 0;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

static void row(const char *what, double big, double small, const char *unit)
{
	if (big < 0 || small < 0)
		printf("  %-40s %10s   %10s\n", what, "n/a", "n/a");
	else
		printf("  %-40s %8.1f %s  %8.1f %s   x%.1f\n", what, big, unit, small, unit,
		       small > 0 ? big / small : 0);
}

int main(void)
{
	struct gen big = { .services = env_int("BENCH_VIEW_SERVICES", 20),
			   .windows = env_int("BENCH_VIEW_WINDOWS", 3600 / WINDOW_S),
			   .seed = 88172645463325252ull };
	struct gen small = { .services = 1, .windows = 1, .seed = 2463534242ull };
	struct result rb, rs;
	double t0;

	big.spans_per_window = env_int("BENCH_VIEW_SPANS_PER_S", 200) * WINDOW_S / big.services;
	small.spans_per_window = big.spans_per_window;
	big.dir = tmpdir_new("bench-view");
	small.dir = tmpdir_new("bench-view-small");
	if (!big.dir || !small.dir)
		return 1;
	printf("\n== spanprof view: 1 hour of a busy node vs one window of one service\n");
	t0 = now_s();
	if (generate(&big) || generate(&small)) {
		fprintf(stderr, "bench_view: generating the directories failed\n");
		return 1;
	}
	printf("  generated %llu profiles (%.0f MiB) and %llu spans in %d services in %.1f s\n",
	       (unsigned long long)big.files, big.bytes / 1048576.0, (unsigned long long)big.spans,
	       big.services, now_s() - t0);
	if (measure(&big, &rb) || measure(&small, &rs)) {
		fprintf(stderr, "bench_view: the viewer did not start\n");
		return 1;
	}
	printf("  %-40s %11s   %11s   ratio\n", "", "1 hour", "1 window");
	row("start-up: directory read, URL printed", rb.start_s * 1e3, rs.start_s * 1e3, "ms");
	row("GET /api/spans (500 slowest)", rb.spans_s * 1e3, rs.spans_s * 1e3, "ms");
	row("GET /api/profile (a span, cold)", rb.span_profile_s * 1e3, rs.span_profile_s * 1e3,
	    "ms");
	row("GET /api/profile (a span name, cold)", rb.name_profile_s * 1e3,
	    rs.name_profile_s * 1e3, "ms");
	row("paint: navigation -> span table (median)", rb.paint_table_ms, rs.paint_table_ms, "ms");
	row("paint: click span -> flame graph", rb.paint_span_ms, rs.paint_span_ms, "ms");
	row("paint: click span name -> flame graph", rb.paint_name_ms, rs.paint_name_ms, "ms");
	row("viewer peak RSS", rb.peak_mib, rs.peak_mib, "MiB");
	if (rb.paint_table_ms < 0)
		printf("  (no paint figures: node, Chromium or playwright-core is missing; "
		       "scripts/setup-debian.sh installs them)\n");
	tmpdir_remove(big.dir);
	tmpdir_remove(small.dir);
	return 0;
}
