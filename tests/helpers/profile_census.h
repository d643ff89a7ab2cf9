/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: reads every profile a service wrote into a directory and counts, per function of
 * interest, how many samples ran in it and which span_id they carried. */
#ifndef SPANPROF_TEST_PROFILE_CENSUS_H
#define SPANPROF_TEST_PROFILE_CENSUS_H

#include <stdint.h>

#define CENSUS_MAX_FUNCS 8
#define CENSUS_MAX_SPANS 8

struct census_func {
	const char *name; /* function to look for anywhere in the stack */
	const char *want_span; /* expected span_id label, or NULL for "no span label" */
	uint64_t samples; /* samples whose stack contains name */
	uint64_t right_span; /* ... whose span_id is want_span (or absent when want_span NULL) */
	uint64_t with_trace; /* ... that carry a 32-hex trace_id */
	char seen_span_name[256]; /* a span_name seen on those samples ("" if none) */
	const char *want_file; /* census_watch_file(): the file name the function must carry */
	uint64_t right_file; /* ... samples where its (innermost) line has that file name */
	uint64_t span_total; /* all samples with span_id want_span, whatever their stack */
};

struct census {
	struct census_func funcs[CENSUS_MAX_FUNCS];
	int nfuncs;
	uint64_t total_samples; /* all samples of the service */
	uint64_t unknown_frames; /* samples whose leaf frame is "[unknown...]" */
	uint64_t kernel_samples; /* samples with a frame in the [kernel.kallsyms] mapping */
	uint64_t in_service_namespace; /* samples labelled service_namespace=<the one seen> */
	char service_namespace[128]; /* the first service_namespace label seen ("" if none) */
	uint64_t
		past_thread_root; /* watched functions found only past runtime.mstart: not counted */
	int files; /* profiles read */
	int go_checked; /* ... that `go tool pprof -raw` parsed */
	int go_missing; /* 1 when go is not installed */
	char go_error[512]; /* first go failure, if any */
};

/* Adds a function to watch. */
void census_watch(struct census *c, const char *function, const char *want_span);

/* Reads dir/<*>-<service>.pb.gz. Returns the number of files read, or -1 on a decode error. */
int census_read(struct census *c, const char *dir, const char *service);

/* As census_watch(), also counting the samples whose line of function names file (its end
 * matches file, so the caller can give a path suffix). */
void census_watch_file(struct census *c, const char *function, const char *want_span,
		       const char *file);

/* The watched function's entry, or NULL. */
const struct census_func *census_get(const struct census *c, const char *function);

#endif /* SPANPROF_TEST_PROFILE_CENSUS_H */
