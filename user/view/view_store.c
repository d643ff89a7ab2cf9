// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loading a data directory: listing, span logs, then the (empty) profile cache. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/log.h"
#include "view/file_read.h"
#include "view/span_file.h"
#include "view/view_store.h"

void view_limits_default(struct view_limits *l)
{
	l->max_files = 100000;
	l->max_spans = 2000000;
	l->max_file_bytes = 256u << 20;
	l->max_cache_bytes = 512u << 20;
	l->max_name_files = 600;
	l->max_nodes = 200000;
}

static int read_log(struct view_store *vs, const struct span_log_file *lf)
{
	char path[4096 + DATA_NAME_MAX];
	struct span_file_result res;
	uint8_t *buf;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%s", vs->dir, lf->name);
	err = file_read_all(path, vs->limits.max_file_bytes, &buf, &len);
	if (err) {
		problems_add(&vs->problems, lf->name, "cannot read: %s",
			     err == -EFBIG ? "larger than the file size limit" : strerror(-err));
		return 0;
	}
	vs->span_log_bytes += len;
	err = span_file_parse(&vs->spans, lf->stem, (const char *)buf, len, &res);
	free(buf);
	if (err)
		return err;
	if (res.bad)
		problems_add(&vs->problems, lf->name,
			     "%llu of %llu lines are not span records (the first: line %llu); "
			     "they were skipped",
			     (unsigned long long)res.bad, (unsigned long long)res.lines,
			     (unsigned long long)res.first_bad);
	return 0;
}

int view_store_load(struct view_store *vs, const char *dir, const struct view_limits *limits)
{
	uint64_t t0 = clock_mono_ns();
	size_t i;
	int err;

	memset(vs, 0, sizeof(*vs));
	vs->dir = dir;
	vs->limits = *limits;
	err = span_table_init(&vs->spans, limits->max_spans);
	if (err)
		return log_err(err, "view: create the span table");
	err = data_dir_scan(&vs->dd, dir, limits->max_files, &vs->problems);
	if (err) {
		view_store_release(vs);
		return log_err(err, "view: list %s", dir);
	}
	for (i = 0; i < vs->dd.nlogs && !err; i++)
		err = read_log(vs, &vs->dd.logs[i]);
	err = err ?: span_table_finish(&vs->spans);
	vs->cache = err ? NULL :
			  profile_cache_new(vs->dd.nprofiles, limits->max_cache_bytes,
					    limits->max_file_bytes);
	if (err || !vs->cache) {
		view_store_release(vs);
		return log_err(-ENOMEM, "view: load %s", dir);
	}
	vs->load_ms = (clock_mono_ns() - t0) / NS_PER_MS;
	vs->loaded_at_ns = clock_real_ns();
	return 0;
}

int view_store_reload(struct view_store *vs)
{
	struct view_store fresh;
	int err;

	err = view_store_load(&fresh, vs->dir, &vs->limits);
	if (err)
		return err;
	view_store_release(vs);
	*vs = fresh;
	return 0;
}

void view_store_release(struct view_store *vs)
{
	profile_cache_free(vs->cache);
	span_table_release(&vs->spans);
	data_dir_release(&vs->dd);
	vs->cache = NULL;
}
