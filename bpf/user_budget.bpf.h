/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-user budgets of what one user may add each second to tables every process shares: new
 * span names (span_names) and ended-span records (span_ends). Every path that adds a name
 * charges it here, to the user whose thread named it: the span hook, a Go span_name pprof label,
 * an OpenTelemetry thread context record. Root's processes are charged each on its own, as they
 * often all run as uid 0. */
#ifndef SPANPROF_USER_BUDGET_BPF_H
#define SPANPROF_USER_BUDGET_BPF_H

#include <bpf/bpf_helpers.h>

#include "helpers.bpf.h"
#include "spanprof_abi.h"

/* One user's spending in the current second (see SPANPROF_NEW_NAMES_PER_USER_S). */
struct user_budget {
	__u64 second; /* bpf_ktime_get_ns() / 1e9 of the counts below */
	__u32 names, ends;
};

enum budget_kind { BUDGET_NAMES, BUDGET_ENDS };

/* The budget key of a task with real uid `uid` in process tgid: the uid, or for root its
 * process. */
static __always_inline __u64 user_budget_key(__u32 uid, __u32 tgid)
{
	return uid ? uid : (1ULL << 32) | tgid;
}

/* Key's budget for the current second (created, or its counts reset when its second is past);
 * NULL when the table has no room for it (the user's spending is then not bounded). now_ns:
 * bpf_ktime_get_ns(), read by the caller. The pointer stays the entry's for the rest of the
 * program: a caller that spends many (a ring read ending many spans) looks it up once. */
static __always_inline struct user_budget *user_budget_get_at(void *budgets, __u64 key,
							      __u64 now_ns)
{
	struct user_budget fresh = { 0 }, *b;
	__u64 second = now_ns / 1000000000ULL;

	b = bpf_map_lookup_elem(budgets, &key);
	if (!b) {
		fresh.second = second;
		bpf_map_update_elem(budgets, &key, &fresh, BPF_NOEXIST);
		b = bpf_map_lookup_elem(budgets, &key);
		if (!b)
			return NULL;
	}
	if (b->second != second) {
		b->second = second;
		b->names = 0;
		b->ends = 0;
	}
	return b;
}

/* 1 when b (from user_budget_get_at(); NULL: unbounded) may spend one more of kind (and it is
 * spent), 0 when its share is spent (counted as drop in drops). */
static __always_inline int user_budget_spend(struct user_budget *b, void *drops,
					     enum budget_kind kind, __u32 drop)
{
	__u32 *used, limit;

	if (!b)
		return 1;
	used = kind == BUDGET_NAMES ? &b->names : &b->ends;
	limit = kind == BUDGET_NAMES ? SPANPROF_NEW_NAMES_PER_USER_S :
				       SPANPROF_SPAN_ENDS_PER_USER_S;
	if (*used >= limit) {
		counter_inc(drops, drop);
		return 0;
	}
	(*used)++;
	return 1;
}

/* 1 when key's user may spend one more of kind this second (and it is spent), 0 when its share
 * is spent (counted as drop in drops). budgets is the user_budgets map. A full budget table or a
 * race between CPUs can let a few more through, never fewer: the bound is on a flood, not on
 * exact counts. */
static __always_inline int user_budget_take(void *budgets, void *drops, __u64 key,
					    enum budget_kind kind, __u32 drop)
{
	return user_budget_spend(user_budget_get_at(budgets, key, bpf_ktime_get_ns()), drops, kind,
				 drop);
}

#endif /* SPANPROF_USER_BUDGET_BPF_H */
