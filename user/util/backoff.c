// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Exponential backoff with equal jitter (half fixed, half random), so that many agents retrying
 * against one recovering server do not all come back at the same moment. */
#include <errno.h>
#include <sys/random.h>
#include <time.h>

#include "util/backoff.h"
#include "util/clock.h"

static uint64_t seed_from_kernel(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == sizeof(s) && s)
		return s;
	/* No entropy yet (early boot): any varying value spreads agents well enough. */
	return (clock_mono_ns() * 1000000007ULL) ^ (uintptr_t)&s;
}

void backoff_init(struct backoff *b, unsigned int initial_ms, unsigned int max_ms, uint64_t seed)
{
	b->initial_ms = initial_ms ? initial_ms : 1;
	b->max_ms = max_ms < b->initial_ms ? b->initial_ms : max_ms;
	b->attempt = 0;
	b->rng = seed ? seed : seed_from_kernel();
	if (!b->rng)
		b->rng = 0x9e3779b97f4a7c15ULL;
}

/* xorshift64* (Vigna): plenty for jitter, and never returns to a zero state. */
static uint64_t next_random(struct backoff *b)
{
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return b->rng * 0x2545f4914f6cdd1dULL;
}

unsigned int backoff_ceiling_ms(const struct backoff *b)
{
	uint64_t base = b->initial_ms;
	unsigned int i;

	/* Stop doubling once at max: attempt may grow without bound during a long outage. */
	for (i = 0; i < b->attempt && base < b->max_ms; i++)
		base *= 2;
	return base > b->max_ms ? b->max_ms : (unsigned int)base;
}

unsigned int backoff_next_ms(struct backoff *b)
{
	unsigned int base = backoff_ceiling_ms(b), half = base / 2;

	if (b->attempt < UINT32_MAX)
		b->attempt++;
	return half + (unsigned int)(next_random(b) % ((uint64_t)base - half + 1));
}

void backoff_reset(struct backoff *b)
{
	b->attempt = 0;
}
