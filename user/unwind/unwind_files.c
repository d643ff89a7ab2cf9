// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-file unwind tables shared across processes (unwind_files.h): the registry of files, what a
 * process's mapping resolves to, and built tables stored as the worker hands them back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind_files_int.h"
#include "util/clock.h"
#include "util/log.h"

struct unwind_files *unwind_files_new(const struct unwind_files_options *opts)
{
	struct unwind_files *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->opts = *opts;
	if (lru_init(&fs->files, opts->max_files) || lru_init(&fs->aliases, opts->max_files)) {
		unwind_files_free(fs);
		errno = ENOMEM;
		return NULL;
	}
	return fs;
}

void unwind_files_free(struct unwind_files *fs)
{
	struct lru_node *n;

	if (!fs)
		return;
	while (fs->files.buckets && (n = lru_oldest(&fs->files)))
		unwind_files_drop_file(fs, lru_entry(n, struct file, node));
	lru_release(&fs->files);
	lru_release(&fs->aliases);
	free(fs);
}

static int bias_of(const struct file *f, const struct proc_map *m, uint64_t *bias)
{
	unsigned int i;

	for (i = 0; i < f->nsegs; i++) {
		const struct seg *s = &f->segs[i];

		if (m->offset >= (s->offset & ~0xfffull) && m->offset < s->offset + s->filesz) {
			*bias = m->start - m->offset - (s->vaddr - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* An evicted file is built again after UNWIND_EVICTED_RETRY_S, or UNWIND_SAMPLED_RETRY_S when
 * a process using it was sampled since: it is wanted, not just mapped. */
static int retry_due(const struct file *f)
{
	uint64_t age = clock_mono_ns() - f->evicted_ns;

	if (f->sampled_ns > f->evicted_ns)
		return age > UNWIND_SAMPLED_RETRY_S * NS_PER_S;
	return age > UNWIND_EVICTED_RETRY_S * NS_PER_S;
}

void unwind_files_note_sampled(struct unwind_files *fs, uint32_t table, uint32_t gen)
{
	struct file *f = table < SPANPROF_UNWIND_MAX_TABLES ? fs->by_table[table] : NULL;

	if (!f || f->table != table || f->gen != gen)
		return;
	f->sampled_ns = clock_mono_ns();
	if (f->state == UNWIND_FILE_READY)
		lru_touch(&fs->files, &f->node);
}

int unwind_files_resolve(struct unwind_files *fs, pid_t pid, const struct proc_map *m,
			 struct unwind_file_ref *out)
{
	struct lru_node *n;
	struct file *f;

	if (!strcmp(m->path, VDSO_PATH)) {
		f = unwind_files_vdso(fs);
		out->key[0] = KEY_VDSO;
		out->key[1] = 0;
	} else if (!m->inode) {
		return -ENOENT; /* another pseudo file ([vsyscall], ...) */
	} else {
		out->key[0] = KEY_DEVINO | m->dev;
		out->key[1] = m->inode;
		n = lru_find(&fs->aliases, out->key[0], out->key[1]);
		f = n ? lru_entry(n, struct alias, node)->file : NULL;
		if (f && f->state == UNWIND_FILE_EVICTED && retry_due(f)) {
			unwind_files_drop_file(fs, f); /* time to try again */
			f = NULL;
		}
		if (!f)
			f = unwind_files_open_file(fs, pid, m);
	}
	if (!f)
		return -ENOENT;
	out->state = f->state;
	out->table = f->table;
	out->gen = f->gen;
	return bias_of(f, m, &out->bias);
}

int unwind_files_pending(const struct unwind_files *fs, const uint64_t key[2])
{
	const struct lru_node *n;
	const struct file *f;

	if (key[0] == KEY_VDSO) {
		n = lru_find(&fs->files, KEY_VDSO, 0);
		f = n ? lru_entry(n, struct file, node) : NULL;
	} else {
		n = lru_find(&fs->aliases, key[0], key[1]);
		f = n ? lru_entry(n, struct alias, node)->file : NULL;
	}
	return f && f->state == UNWIND_FILE_PENDING;
}

/* Puts a built table into the maps, evicting least recently used tables for room. */
static void store(struct unwind_files *fs, struct file *f, struct unwind_job *j)
{
	int err;

	fs->stats.built++;
	fs->stats.build_us += j->table.stats.build_us;
	fs->stats.text_bytes += j->table.stats.text_bytes;
	fs->stats.rows += j->table.nrows;
	f->chunks = unwind_store_chunks_needed(&j->table);
	while ((err = unwind_store_put(fs->opts.store, &j->table, &f->table, &f->gen)) == -ENOSPC)
		if ((err = unwind_files_evict_for(fs, f)))
			break;
	if (err == -EDQUOT) {
		fs->stats.fair_refused++;
		log_warn_from((long)f->uid, err,
			      "unwind table of %s (uid %u) not stored: its user holds its share of "
			      "the table budget; frame pointers there",
			      f->path ?: "?", (unsigned int)f->uid);
		unwind_files_set_state(fs, f, UNWIND_FILE_EVICTED);
		f->evicted_ns = clock_mono_ns();
		return;
	}
	if (err) {
		log_debug("unwind table of %s (%zu rows) not stored: %s", f->path ?: "?",
			  j->table.nrows, strerror(-err));
		unwind_files_set_state(fs, f, UNWIND_FILE_FAILED);
		return;
	}
	unwind_files_set_state(fs, f, UNWIND_FILE_READY);
	/* A new table counts as just sampled: it gets a window to be used before it may go. */
	lru_touch(&fs->files, &f->node);
	fs->by_table[f->table] = f;
}

size_t unwind_files_poll(struct unwind_files *fs)
{
	struct unwind_job *j = unwind_worker_take_done(fs->opts.worker), *next;
	size_t n = 0;

	for (; j; j = next, n++) {
		struct file *f = j->owner;

		next = j->next;
		if (j->err == -ENOENT) {
			log_debug("unwind: %s has no CFI: frame pointers there", f->path ?: "?");
			unwind_files_set_state(fs, f, UNWIND_FILE_NOCFI);
		} else if (j->err == -ETIME || j->err == -EFBIG) {
			if (j->err == -ETIME)
				fs->stats.budget_spent++;
			else
				fs->stats.oversized++;
			log_warn(j->err, "unwind table of %s not built: %s; frame pointers there",
				 f->path ?: "?",
				 j->err == -ETIME ? "its CFI spent the build budget" :
						    "a section is over its size cap");
			unwind_files_set_state(fs, f, UNWIND_FILE_FAILED);
		} else if (j->err) {
			log_debug("unwind table of %s: %s", f->path ?: "?", strerror(-j->err));
			unwind_files_set_state(fs, f, UNWIND_FILE_FAILED);
		} else {
			store(fs, f, j);
		}
		cfi_table_release(&j->table);
		free(j);
	}
	return n;
}

void unwind_files_get_stats(const struct unwind_files *fs, struct unwind_files_stats *out)
{
	*out = fs->stats;
}
