/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: reads a service's profiles and checks whole call chains: of the samples whose
 * innermost user-space function is the chain's leaf, how many carry every function of the chain,
 * in order, towards the root. */
#ifndef SPANPROF_TEST_STACK_CHAIN_H
#define SPANPROF_TEST_STACK_CHAIN_H

#include <stddef.h>
#include <stdint.h>

struct chain_count {
	uint64_t samples; /* all samples of the service */
	uint64_t leaf; /* samples whose first user-space function is chain[0] (any, if NULL) */
	uint64_t whole; /* ... whose stack holds chain[1..n-1] in order */
	uint64_t ends; /* ... and whose outermost user-space function is chain[n-1] */
	int files; /* profiles read */
};

/* Counts over dir/<*>-<service>.pb.gz. chain[0] may be NULL: every sample is a leaf sample.
 * chain[1..] may name alternatives separated by '|' ("start_thread|[unknown] (libc.so.6)").
 * Prints up to three stacks that missed the chain. Returns files read, or -1 on a decode error. */
int chain_count(const char *dir, const char *service, const char *const *chain, size_t n,
		struct chain_count *out);

#endif /* SPANPROF_TEST_STACK_CHAIN_H */
