// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `spanprof view`: flags, load, serve until a stop signal. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "view/view_cmd.h"
#include "view/view_http.h"
#include "view/view_store.h"

#define DEFAULT_DIR "spanprof-data"
#define DEFAULT_HOST "127.0.0.1"
#define DEFAULT_PORT 8080

struct view_opts {
	const char *dir, *host;
	unsigned int port;
	struct view_limits limits;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: spanprof view [DIR] [--port N] [--addr IP] [--max-spans N]\n"
		"                     [--max-memory MIB] [--max-files N]\n"
		"Serves a local web page on the spans and profiles an agent wrote to DIR\n"
		"(default ./" DEFAULT_DIR "), on http://" DEFAULT_HOST
		":%d/ unless told otherwise.\n"
		"  --port N          port (0 picks a free one); default %d\n"
		"  --addr IP         address to listen on; default " DEFAULT_HOST
		" (loopback only: the page\n"
		"                    shows span names and trace ids; anything else exposes them)\n"
		"  --max-spans N     span records kept (default 2000000; more are counted)\n"
		"  --max-memory MIB  decoded profiles kept in memory (default 512)\n"
		"  --max-files N     profiles and span logs listed (default 100000)\n",
		DEFAULT_PORT, DEFAULT_PORT);
}

static int parse_num(const char *flag, const char *s, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end || !*s || *out > max || s[0] == '-') {
		fprintf(stderr, "spanprof view: %s '%s': expected a number up to %llu\n", flag, s,
			max);
		return -EINVAL;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct view_opts *o)
{
	static const struct option longs[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "addr", required_argument, NULL, 'a' },
		{ "max-spans", required_argument, NULL, 's' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "max-files", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		} else if (c == 'p' && !parse_num("--port", optarg, 65535, &v)) {
			o->port = (unsigned int)v;
		} else if (c == 'a') {
			o->host = optarg;
		} else if (c == 's' && !parse_num("--max-spans", optarg, 1ull << 30, &v) && v) {
			o->limits.max_spans = (size_t)v;
		} else if (c == 'm' && !parse_num("--max-memory", optarg, 1ull << 20, &v) && v) {
			o->limits.max_cache_bytes = (size_t)v << 20;
		} else if (c == 'f' && !parse_num("--max-files", optarg, 1ull << 24, &v) && v) {
			o->limits.max_files = (size_t)v;
		} else {
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->dir = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "spanprof view: one directory at most ('%s' is extra)\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int view_main(int argc, char **argv, const sigset_t *stop_signals)
{
	struct view_opts o = { DEFAULT_DIR, DEFAULT_HOST, DEFAULT_PORT, { 0 } };
	struct view_store vs;
	struct http_server *h;
	int rc, sig;

	view_limits_default(&o.limits);
	rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (view_store_load(&vs, o.dir, &o.limits))
		return 1;
	h = view_http_start(&vs, o.host, o.port);
	if (!h) {
		view_store_release(&vs);
		return 1;
	}
	printf(strchr(o.host, ':') ? "http://[%s]:%u/\n" : "http://%s:%u/\n", o.host,
	       http_server_port(h));
	fflush(stdout);
	log_info("view: serving %s: %zu spans from %zu span logs, %zu profiles (loaded in %llu ms)",
		 o.dir, vs.spans.n, vs.dd.nlogs, vs.dd.nprofiles, (unsigned long long)vs.load_ms);
	if (strcmp(o.host, "127.0.0.1") && strcmp(o.host, "::1"))
		log_warn(
			0,
			"view: listening on %s, not loopback: anyone who reaches it sees the spans",
			o.host);
	sigwait(stop_signals, &sig);
	http_server_stop(h);
	view_store_release(&vs);
	return 0;
}
