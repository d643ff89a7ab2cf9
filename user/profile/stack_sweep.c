// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Age sweep of a shared stack map (stack_sweep.h). */
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "profile/stack_sweep.h"
#include "util/spanprof_types.h"

int stack_sweep(int fd, uint64_t now_ns, uint64_t max_age_ns, uint32_t *deleted)
{
	__u32 now = (__u32)(now_ns >> SPANPROF_STACK_TAKEN_SHIFT);
	__u32 age = (__u32)(max_age_ns >> SPANPROF_STACK_TAKEN_SHIFT);
	struct spanprof_user_stack st;
	__u64 *old, key, *prev = NULL;
	uint32_t n = 0, i;

	*deleted = 0;
	old = malloc(STACK_SWEEP_BATCH * sizeof(*old));
	if (!old)
		return -ENOMEM;
	/* Keys first, deleted after the walk: deleting the key a walk stands on restarts it. */
	while (n < STACK_SWEEP_BATCH && !bpf_map_get_next_key(fd, prev, &key)) {
		if (!bpf_map_lookup_elem(fd, &key, &st) && (__u32)(now - st.taken) > age)
			old[n++] = key;
		prev = &key;
	}
	for (i = 0; i < n; i++)
		if (!bpf_map_delete_elem(fd, &old[i]))
			(*deleted)++;
	free(old);
	return 0;
}
