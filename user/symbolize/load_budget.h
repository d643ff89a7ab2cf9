/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Time budget for reading and parsing process-controlled files (ELF, DWARF, perf maps) per
 * round of the run loop: once a round has spent it, further loads wait for the next round and
 * are counted, so no input can hold up the drain for long. */
#ifndef SPANPROF_LOAD_BUDGET_H
#define SPANPROF_LOAD_BUDGET_H

#include <stdint.h>

/* Spent per round when load_budget_init() gets 0. */
#define LOAD_BUDGET_DEFAULT_NS (200ull * 1000 * 1000)

struct load_budget {
	uint64_t per_round_ns; /* allowed per round */
	uint64_t spent_ns; /* spent in this round */
	uint64_t started_ns; /* start of the load in progress, 0 when none */
	uint64_t deferred; /* loads refused because the round's budget was spent */
	uint64_t overruns; /* loads that alone took longer than a whole round's budget */
};

void load_budget_init(struct load_budget *b, uint64_t per_round_ns);

/* Starts a new round (each drain): the budget is full again. */
void load_budget_new_round(struct load_budget *b);

/* 1 and starts timing when a load may run in this round; 0 (counted as deferred) when the
 * round's budget is spent. Every 1 must be followed by load_budget_end(). */
int load_budget_begin(struct load_budget *b);
/* Ends the load; returns 1 when it alone took longer than a round's budget (an overrun). */
int load_budget_end(struct load_budget *b);

#endif /* SPANPROF_LOAD_BUDGET_H */
