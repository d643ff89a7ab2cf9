/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Exponential backoff with "equal jitter": the n-th delay in a row is drawn uniformly from
 * [base/2, base] where base = min(max, initial * 2^n), so retries spread out but never stall. */
#ifndef SPANPROF_BACKOFF_H
#define SPANPROF_BACKOFF_H

#include <stdint.h>

struct backoff {
	unsigned int initial_ms, max_ms;
	unsigned int attempt; /* failures in a row so far */
	uint64_t rng; /* xorshift64* state, never 0 */
};

/* initial_ms >= 1 and max_ms >= initial_ms are the caller's to check (they are clamped here).
 * seed 0 seeds from getrandom(); tests pass a fixed seed to replay a sequence. */
void backoff_init(struct backoff *b, unsigned int initial_ms, unsigned int max_ms, uint64_t seed);

/* Delay before the next try after one more failure, in ms; counts the failure. */
unsigned int backoff_next_ms(struct backoff *b);

/* The upper bound the next backoff_next_ms() will draw under: min(max, initial * 2^attempt). */
unsigned int backoff_ceiling_ms(const struct backoff *b);

/* After a success: the next failure waits about initial_ms again. */
void backoff_reset(struct backoff *b);

#endif /* SPANPROF_BACKOFF_H */
