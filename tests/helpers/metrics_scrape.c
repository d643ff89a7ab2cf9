// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: one metric from the agent's /metrics (metrics_scrape.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "metrics_scrape.h"

#define BODY_MAX (4 << 20) /* span time series of a thousand pairs and more */

static size_t collect(void *data, size_t size, size_t n, void *userp)
{
	char *buf = userp;
	size_t len = strlen(buf), add = size * n;

	if (len + add >= BODY_MAX)
		add = BODY_MAX - 1 - len;
	memcpy(buf + len, data, add);
	buf[len + add] = '\0';
	return size * n;
}

int metrics_scrape_port(const char *log_path)
{
	char line[1024];
	int port = -1;
	FILE *f = fopen(log_path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "metrics server listening on");

		p = p ? strstr(p, "(port ") : NULL;
		if (p)
			port = atoi(p + strlen("(port "));
	}
	if (f)
		fclose(f);
	return port;
}

/* The body of one GET of http://127.0.0.1:port/metrics (free() it), or NULL. */
static char *fetch_metrics(int port)
{
	char url[64], *body = calloc(1, BODY_MAX);
	CURL *c = curl_easy_init();
	int ok = 0;

	if (body && c) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
		ok = curl_easy_perform(c) == CURLE_OK;
	}
	curl_easy_cleanup(c);
	if (!ok) {
		free(body);
		return NULL;
	}
	return body;
}

int metrics_scrape_each(int port, const char *prefix,
			void (*fn)(void *ctx, const char *rest, double value), void *ctx)
{
	char *line, *save = NULL, *value, *body = fetch_metrics(port);
	size_t plen = strlen(prefix);
	int n = 0;

	if (!body)
		return -1;
	for (line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, prefix, plen) || !(value = strrchr(line, ' ')))
			continue;
		*value++ = '\0';
		fn(ctx, line + plen, atof(value));
		n++;
	}
	free(body);
	return n;
}

struct one_metric {
	double *value;
	int found;
};

/* A line whose whole name is the metric: nothing after the prefix. */
static void take_exact(void *ctx, const char *rest, double value)
{
	struct one_metric *m = ctx;

	if (!m->found && !rest[0]) {
		*m->value = value;
		m->found = 1;
	}
}

int metrics_scrape(int port, const char *metric, double *value)
{
	struct one_metric m = { .value = value };

	if (metrics_scrape_each(port, metric, take_exact, &m) < 0)
		return -1;
	return m.found ? 0 : -1;
}

double metrics_scrape_until(int port, const char *metric, double want, int timeout_s)
{
	double v = -1;

	for (int i = 0; i < timeout_s * 10; i++) {
		if (!metrics_scrape(port, metric, &v) && v >= want)
			break;
		usleep(100000);
	}
	return v;
}
