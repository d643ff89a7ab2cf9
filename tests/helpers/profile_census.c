// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only census of span labels per function across a service's profiles. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "pprof_file.h"
#include "profile_census.h"

void census_watch(struct census *c, const char *function, const char *want_span)
{
	struct census_func *f = &c->funcs[c->nfuncs++];

	memset(f, 0, sizeof(*f));
	f->name = function;
	f->want_span = want_span;
}

void census_watch_file(struct census *c, const char *function, const char *want_span,
		       const char *file)
{
	census_watch(c, function, want_span);
	c->funcs[c->nfuncs - 1].want_file = file;
}

static int file_matches(const char *file, const char *suffix)
{
	size_t flen = file ? strlen(file) : 0, slen = strlen(suffix);

	return flen >= slen && !strcmp(file + flen - slen, suffix);
}

const struct census_func *census_get(const struct census *c, const char *function)
{
	for (int i = 0; i < c->nfuncs; i++)
		if (!strcmp(c->funcs[i].name, function))
			return &c->funcs[i];
	return NULL;
}

static int has_kernel_frame(const Perftools__Profiles__Profile *p,
			    const Perftools__Profiles__Sample *s)
{
	for (size_t i = 0; i < s->n_location_id; i++) {
		const Perftools__Profiles__Location *loc = pprof_location(p, s->location_id[i]);
		const Perftools__Profiles__Mapping *m =
			loc ? pprof_mapping(p, loc->mapping_id) : NULL;
		const char *file = m ? pprof_str(p, m->filename) : NULL;

		if (file && !strcmp(file, "[kernel.kallsyms]"))
			return 1;
	}
	return 0;
}

static void count_sample(struct census *c, const Perftools__Profiles__Profile *p,
			 const Perftools__Profiles__Sample *s, uint64_t n)
{
	const char *span = pprof_sample_label(p, s, "span_id");
	const char *trace = pprof_sample_label(p, s, "trace_id");
	const char *name = pprof_sample_label(p, s, "span_name");
	const char *leaf = pprof_leaf_function(p, s);
	const char *ns = pprof_sample_label(p, s, "service_namespace");
	long root;

	c->total_samples += n;
	if (ns && !c->service_namespace[0])
		snprintf(c->service_namespace, sizeof(c->service_namespace), "%s", ns);
	if (ns && !strcmp(ns, c->service_namespace))
		c->in_service_namespace += n;
	if (has_kernel_frame(p, s))
		c->kernel_samples += n;
	if (leaf && !strncmp(leaf, "[unknown]", 9))
		c->unknown_frames += n;
	/* A Go thread's own stack starts at runtime.mstart; frames past it come from a frame-pointer
	 * chain the runtime left stale (seen on sysmon), not from the goroutine that ran there. */
	root = pprof_sample_function_depth(p, s, "runtime.mstart", 1);
	for (int i = 0; i < c->nfuncs; i++) {
		struct census_func *f = &c->funcs[i];
		long depth = pprof_sample_function_depth(p, s, f->name, 0);

		if (f->want_span && span && !strcmp(span, f->want_span))
			f->span_total += n;
		if (depth < 0)
			continue;
		if (root >= 0 && depth > root) {
			c->past_thread_root += n;
			continue;
		}
		f->samples += n;
		if (f->want_span ? span && !strcmp(span, f->want_span) : !span)
			f->right_span += n;
		if (trace && strlen(trace) == 32)
			f->with_trace += n;
		if (f->want_file &&
		    file_matches(pprof_sample_function_file(p, s, f->name), f->want_file))
			f->right_file += n;
		if (name && !f->seen_span_name[0])
			snprintf(f->seen_span_name, sizeof(f->seen_span_name), "%s", name);
	}
}

static void read_one(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct census *c = ctx;
	int rc;

	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_value && p->period > 0)
			count_sample(c, p, s, s->value[0] / p->period);
	}
	c->files++;
	rc = pprof_file_check_with_go(path, c->go_error[0] ? NULL : c->go_error,
				      c->go_error[0] ? 0 : sizeof(c->go_error));
	if (rc == 0)
		c->go_checked++;
	else if (rc == 1)
		c->go_missing = 1;
}

int census_read(struct census *c, const char *dir, const char *service)
{
	return pprof_file_each(dir, service, NULL, read_one, c) < 0 ? -1 : c->files;
}
