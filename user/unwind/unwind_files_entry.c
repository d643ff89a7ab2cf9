// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One file's entry in the registry of unwind tables (unwind_files_int.h): its state, kept in the
 * per-state counts, and its removal with its aliases and its table. */
#include <stdlib.h>

#include "unwind/unwind_files_int.h"

void unwind_files_drop_file(struct unwind_files *fs, struct file *f)
{
	struct alias *a, *next;

	for (a = f->aliases; a; a = next) {
		next = a->next;
		lru_del(&fs->aliases, &a->node);
		free(a);
	}
	if (f->state == UNWIND_FILE_READY)
		unwind_store_drop(fs->opts.store, f->table);
	if (f->table < SPANPROF_UNWIND_MAX_TABLES && fs->by_table[f->table] == f)
		fs->by_table[f->table] = NULL;
	fs->stats.files[f->state]--;
	lru_del(&fs->files, &f->node);
	free(f->path);
	free(f);
}

void unwind_files_set_state(struct unwind_files *fs, struct file *f, enum unwind_file_state s)
{
	fs->stats.files[f->state]--;
	f->state = s;
	fs->stats.files[s]++;
}
