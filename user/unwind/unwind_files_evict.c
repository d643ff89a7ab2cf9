// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Room in the table budget: who holds its chunks, and which table goes when a new one needs
 * space, so that one user's files cannot push every other user's tables out. */
#include <errno.h>

#include "unwind/unwind_files_int.h"
#include "util/clock.h"

/* Who holds the table memory, in one pass over the files. */
struct holders {
	uint64_t mine; /* chunks of uid's tables */
	size_t users; /* users holding tables, uid counted */
	uid_t top; /* the user holding the most chunks */
};

#define MAX_HOLDERS 64 /* users told apart; more share the last entry's count */

static void count_holders(struct unwind_files *fs, uid_t uid, struct holders *out)
{
	struct {
		uid_t uid;
		uint64_t chunks;
	} h[MAX_HOLDERS];
	size_t n = 0, i, best = 0;
	struct lru_node *node;
	struct file *f;

	for (node = lru_oldest(&fs->files); node; node = lru_newer(&fs->files, node)) {
		f = lru_entry(node, struct file, node);
		if (f->state != UNWIND_FILE_READY)
			continue;
		for (i = 0; i < n && h[i].uid != f->uid; i++)
			;
		if (i == n && n < MAX_HOLDERS) {
			h[n].uid = f->uid;
			h[n++].chunks = 0;
		}
		h[i < n ? i : n - 1].chunks += f->chunks;
	}
	*out = (struct holders){ .users = n, .top = uid };
	for (i = 0; i < n; i++) {
		if (h[i].uid == uid)
			out->mine = h[i].chunks;
		if (h[i].chunks > best) {
			best = h[i].chunks;
			out->top = h[i].uid;
		}
	}
	out->users += !out->mine;
}

int unwind_files_evict_for(struct unwind_files *fs, const struct file *want)
{
	struct unwind_store_stats ss;
	struct holders h;
	struct lru_node *n;
	struct file *f;
	uid_t victim;

	unwind_store_get_stats(fs->opts.store, &ss);
	count_holders(fs, want->uid, &h);
	victim = h.mine + want->chunks > ss.chunks_total / h.users ? want->uid : h.top;
	for (n = lru_oldest(&fs->files); n; n = lru_newer(&fs->files, n)) {
		f = lru_entry(n, struct file, node);
		if (f->state != UNWIND_FILE_READY || f->uid != victim)
			continue;
		unwind_store_drop(fs->opts.store, f->table);
		unwind_files_set_state(fs, f, UNWIND_FILE_EVICTED);
		f->evicted_ns = clock_mono_ns();
		fs->stats.evicted++;
		return 0;
	}
	return victim == want->uid && h.users > 1 ? -EDQUOT : -ENOSPC;
}
