/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: reads one value from a running agent's /metrics (started with
 * --metrics-addr 127.0.0.1:0; the port comes from its log). */
#ifndef SPANPROF_TEST_METRICS_SCRAPE_H
#define SPANPROF_TEST_METRICS_SCRAPE_H

/* The port the agent logged ("metrics server listening on ... (port N)"), or -1. */
int metrics_scrape_port(const char *log_path);

/* Value of one metric line (exact name with labels) at http://127.0.0.1:port/metrics. Returns 0
 * and sets *value, or -1 when the request failed or the line is missing. */
int metrics_scrape(int port, const char *metric, double *value);

/* Calls fn(ctx, rest, value) for every metric line of one /metrics response that starts with
 * prefix (rest: the line after the prefix, up to the value). Returns the lines passed to fn, or
 * -1 when the request failed. */
int metrics_scrape_each(int port, const char *prefix,
			void (*fn)(void *ctx, const char *rest, double value), void *ctx);

/* Scrapes metric every 0.1 s until it is at least want (the agent publishes what it read at its
 * drains) or timeout_s passed. Returns the last value read, or -1 when none was. */
double metrics_scrape_until(int port, const char *metric, double want, int timeout_s);

#endif /* SPANPROF_TEST_METRICS_SCRAPE_H */
