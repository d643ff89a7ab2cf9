// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-round time budget for loads of untrusted files (see load_budget.h). */
#include <time.h>

#include "symbolize/load_budget.h"
#include "util/clock.h"

void load_budget_init(struct load_budget *b, uint64_t per_round_ns)
{
	*b = (struct load_budget){ .per_round_ns = per_round_ns ?: LOAD_BUDGET_DEFAULT_NS };
}

void load_budget_new_round(struct load_budget *b)
{
	b->spent_ns = 0;
}

int load_budget_begin(struct load_budget *b)
{
	if (b->spent_ns >= b->per_round_ns) {
		b->deferred++;
		return 0;
	}
	b->started_ns = clock_mono_ns();
	return 1;
}

int load_budget_end(struct load_budget *b)
{
	uint64_t took;

	if (!b->started_ns)
		return 0;
	took = clock_mono_ns() - b->started_ns;
	b->started_ns = 0;
	b->spent_ns += took;
	if (took <= b->per_round_ns)
		return 0;
	b->overruns++;
	return 1;
}
