// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: call-chain census over a service's profiles (stack_chain.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "pprof_file.h"
#include "stack_chain.h"

#define MAX_FRAMES 300

/* The sample's function names leaf first, kernel frames left out; returns how many. */
static size_t user_functions(const Perftools__Profiles__Profile *p,
			     const Perftools__Profiles__Sample *s, const char **out)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Mapping *m;
	const Perftools__Profiles__Function *fn;
	const char *file;
	size_t i, j, n = 0;

	for (i = 0; i < s->n_location_id && n < MAX_FRAMES; i++) {
		loc = pprof_location(p, s->location_id[i]);
		if (!loc)
			continue;
		m = pprof_mapping(p, loc->mapping_id);
		file = m ? pprof_str(p, m->filename) : NULL;
		if (file && !strcmp(file, "[kernel.kallsyms]"))
			continue;
		if (!loc->n_line) {
			out[n++] = "[no line]";
			continue;
		}
		/* Inlined functions come innermost first. */
		for (j = 0; j < loc->n_line && n < MAX_FRAMES; j++) {
			fn = pprof_function(p, loc->line[j]->function_id);
			out[n++] = fn ? pprof_str(p, fn->name) : "[no function]";
		}
	}
	return n;
}

/* 1 when fn is one of the '|'-separated names in want. */
static int name_matches(const char *fn, const char *want)
{
	size_t len = strlen(fn);
	const char *bar;

	for (;;) {
		bar = strchr(want, '|');
		if ((bar ? (size_t)(bar - want) : strlen(want)) == len && !strncmp(fn, want, len))
			return 1;
		if (!bar)
			return 0;
		want = bar + 1;
	}
}

static int has_chain(const char **fns, size_t nfns, const char *const *chain, size_t n)
{
	size_t i = 1, j;

	for (j = 1; j < nfns && i < n; j++)
		if (fns[j] && name_matches(fns[j], chain[i]))
			i++;
	return i == n;
}

static void count_profile(const Perftools__Profiles__Profile *p, const char *const *chain, size_t n,
			  struct chain_count *out, int *printed)
{
	const char *fns[MAX_FRAMES];
	uint64_t count;
	size_t i, k, nfns;

	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (!s->n_value || p->period <= 0)
			continue;
		count = s->value[0] / p->period;
		out->samples += count;
		nfns = user_functions(p, s, fns);
		if (!nfns || (chain[0] && (!fns[0] || strcmp(fns[0], chain[0]))))
			continue;
		out->leaf += count;
		if (has_chain(fns, nfns, chain, n)) {
			out->whole += count;
			if (fns[nfns - 1] && name_matches(fns[nfns - 1], chain[n - 1]))
				out->ends += count;
		} else if (*printed < 3) {
			(*printed)++;
			printf("# stack without the whole chain (%lu samples):",
			       (unsigned long)count);
			for (k = 0; k < nfns && k < 40; k++)
				printf(" %s", fns[k]);
			printf("\n");
		}
	}
}

struct chain_walk {
	const char *const *chain;
	size_t n;
	struct chain_count *out;
	int printed;
};

static void count_file(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct chain_walk *w = ctx;

	(void)path;
	count_profile(p, w->chain, w->n, w->out, &w->printed);
	w->out->files++;
}

int chain_count(const char *dir, const char *service, const char *const *chain, size_t n,
		struct chain_count *out)
{
	struct chain_walk w = { chain, n, out, 0 };

	memset(out, 0, sizeof(*out));
	return pprof_file_each(dir, service, NULL, count_file, &w) < 0 ? -1 : out->files;
}
