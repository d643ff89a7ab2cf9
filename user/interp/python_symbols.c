// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython code objects read from /proc/PID/mem into a bounded LRU cache. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "interp/python_symbols.h"
#include "interp/python_lines.h"
#include "util/lru.h"
#include "util/text_clean.h"

#define NAME_MAX_LEN 128
#define FILE_MAX_LEN 256
/* PyASCIIObject state bits. */
#define STATE_COMPACT (1u << 5)
#define STATE_ASCII (1u << 6)

struct code_entry {
	struct lru_node node; /* k1 = code address, k2 = pid << 32 | firstlineno */
	uint32_t check;
	int firstlineno;
	uid_t uid; /* the process's, whose budget share the entry counts in */
	char name[NAME_MAX_LEN];
	char file[FILE_MAX_LEN];
	uint8_t *table;
	size_t table_len;
};

struct python_symbols {
	const char *proc_root;
	size_t max_entries;
	struct lru cache;
	struct interp_budget *budget; /* NULL: none */
	size_t fixed; /* this structure and the hash */
	/* A code object the budget refused: named from here until the next call; its line table is
	 * freed before python_symbols_resolve() returns. */
	struct code_entry uncached;
	struct python_symbols_stats stats;
};

static int evict_for_budget(void *cache, uid_t uid);

struct python_symbols *python_symbols_new(const char *proc_root, size_t max_entries,
					  struct interp_budget *budget)
{
	struct python_symbols *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->proc_root = proc_root;
	ps->max_entries = max_entries ? max_entries : 1;
	if (lru_init(&ps->cache, ps->max_entries)) {
		free(ps);
		errno = ENOMEM;
		return NULL;
	}
	ps->fixed = sizeof(*ps) + ps->cache.nbuckets * sizeof(*ps->cache.buckets);
	if (budget &&
	    interp_budget_attach(budget, INTERP_CACHE_PYTHON, ps, evict_for_budget, ps->fixed)) {
		lru_release(&ps->cache);
		free(ps);
		errno = ENOSPC;
		return NULL;
	}
	ps->budget = budget;
	ps->stats.bytes = ps->fixed;
	return ps;
}

size_t python_symbols_entry_bytes(void)
{
	return sizeof(struct code_entry);
}

/* What e holds on the heap: the entry and its line table (malloc was asked for at least 1). */
static size_t entry_bytes(const struct code_entry *e)
{
	return sizeof(*e) + (e->table ? (e->table_len ? e->table_len : 1) : 0);
}

static void drop_entry(struct python_symbols *ps, struct lru_node *n)
{
	struct code_entry *e = lru_entry(n, struct code_entry, node);

	ps->stats.bytes -= entry_bytes(e);
	if (ps->budget)
		interp_budget_give(ps->budget, INTERP_CACHE_PYTHON, e->uid, entry_bytes(e));
	lru_del(&ps->cache, n);
	free(e->table);
	free(e);
}

/* The budget needs room: uid's least recently used code object goes. */
static int evict_for_budget(void *cache, uid_t uid)
{
	struct python_symbols *ps = cache;
	struct lru_node *n;

	for (n = lru_oldest(&ps->cache); n; n = lru_newer(&ps->cache, n))
		if (lru_entry(n, struct code_entry, node)->uid == uid)
			break;
	if (!n)
		return -ENOENT;
	drop_entry(ps, n);
	ps->stats.evictions++;
	return 0;
}

void python_symbols_free(struct python_symbols *ps)
{
	struct lru_node *n;

	if (!ps)
		return;
	while ((n = lru_oldest(&ps->cache)))
		drop_entry(ps, n);
	if (ps->budget)
		interp_budget_detach(ps->budget, INTERP_CACHE_PYTHON, ps->fixed);
	lru_release(&ps->cache);
	free(ps);
}

static int read_mem(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t got = pread(fd, buf, len, (off_t)addr);

	return got == (ssize_t)len ? 0 : -EFAULT;
}

/* A compact ASCII str object into out (NUL-terminated, cut to size); "?" for other kinds. */
static int read_str(int fd, const struct python_offsets *off, uint64_t obj, char *out, size_t size)
{
	uint32_t state;
	int64_t len;

	if (!obj || read_mem(fd, obj + off->str_length, &len, sizeof(len)) ||
	    read_mem(fd, obj + off->str_state, &state, sizeof(state)))
		return -EFAULT;
	if (!(state & STATE_COMPACT) || !(state & STATE_ASCII) || len < 0) {
		snprintf(out, size, "?");
		return 0;
	}
	if ((uint64_t)len >= size)
		len = size - 1;
	if (read_mem(fd, obj + off->str_ascii_data, out, len))
		return -EFAULT;
	out[len] = '\0';
	text_clean(out); /* the process's bytes: no newline or ESC into any output */
	return 0;
}

/* The code object's line table (a bytes object), bounded by PYTHON_SYMBOLS_TABLE_MAX. */
static int read_table(int fd, const struct python_offsets *off, uint64_t code, struct code_entry *e)
{
	uint64_t obj;
	int64_t len;

	if (read_mem(fd, code + off->co_linetable, &obj, sizeof(obj)) || !obj ||
	    read_mem(fd, obj + off->bytes_size, &len, sizeof(len)) || len < 0)
		return -EFAULT;
	if (len > PYTHON_SYMBOLS_TABLE_MAX)
		return 0; /* too long to trust: lines fall back to the first line */
	e->table = malloc(len ? len : 1);
	if (!e->table)
		return -ENOMEM;
	e->table_len = len;
	return read_mem(fd, obj + off->bytes_data, e->table, len);
}

/* Reads the code object and checks it is still the one BPF saw: the same first line and the
 * same check over its name, file name, qualified name and line table (SPANPROF_PY_CHECK).
 * Returns 0, -ESTALE or -errno. */
static int fill_entry(int fd, const struct python_offsets *off, const struct interp_frame *f,
		      struct code_entry *e)
{
	uint64_t name_obj, file_obj, qual_obj = 0, table_obj;
	int32_t first;

	if (read_mem(fd, f->code + off->bpf.code_firstlineno, &first, sizeof(first)) ||
	    read_mem(fd, f->code + off->co_name, &name_obj, sizeof(name_obj)) ||
	    read_mem(fd, f->code + off->co_filename, &file_obj, sizeof(file_obj)) ||
	    read_mem(fd, f->code + off->co_linetable, &table_obj, sizeof(table_obj)))
		return -EFAULT;
	if (off->co_qualname &&
	    read_mem(fd, f->code + off->co_qualname, &qual_obj, sizeof(qual_obj)))
		return -EFAULT;
	if ((uint32_t)first != f->firstlineno ||
	    SPANPROF_PY_CHECK(name_obj, file_obj, qual_obj, table_obj) != f->check)
		return -ESTALE;
	e->firstlineno = first;
	e->check = f->check;
	if (read_str(fd, off, qual_obj ? qual_obj : name_obj, e->name, sizeof(e->name)) ||
	    read_str(fd, off, file_obj, e->file, sizeof(e->file)))
		return -EFAULT;
	return read_table(fd, off, f->code, e);
}

static struct code_entry *load_entry(struct python_symbols *ps, pid_t pid,
				     const struct python_offsets *off, const struct interp_frame *f)
{
	struct code_entry *e = calloc(1, sizeof(*e));
	struct stat st = { 0 };
	char path[64];
	int fd, err;

	if (!e)
		return NULL;
	snprintf(path, sizeof(path), "%s/%d/mem", ps->proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		err = -errno;
	else
		err = fill_entry(fd, off, f, e);
	e->uid = st.st_uid;
	if (fd >= 0)
		close(fd);
	if (err) {
		if (err == -ESTALE)
			ps->stats.stale++;
		else
			ps->stats.read_errors++;
		free(e->table);
		free(e);
		return NULL;
	}
	return e;
}

static struct code_entry *lookup(struct python_symbols *ps, pid_t pid,
				 const struct python_offsets *off, const struct interp_frame *f)
{
	uint64_t k2 = (uint64_t)(uint32_t)pid << 32 | f->firstlineno;
	struct lru_node *n = lru_find(&ps->cache, f->code, k2);
	struct code_entry *e;

	if (n && lru_entry(n, struct code_entry, node)->check == f->check) {
		ps->stats.hits++;
		lru_touch(&ps->cache, n);
		return lru_entry(n, struct code_entry, node);
	}
	if (n)
		drop_entry(ps, n);
	ps->stats.misses++;
	e = load_entry(ps, pid, off, f);
	if (!e)
		return NULL;
	if (ps->cache.count >= ps->max_entries && (n = lru_oldest(&ps->cache))) {
		drop_entry(ps, n);
		ps->stats.evictions++;
	}
	if (ps->budget &&
	    interp_budget_take(ps->budget, INTERP_CACHE_PYTHON, e->uid, entry_bytes(e))) {
		ps->stats.refused++;
		ps->uncached = *e; /* its table is freed once this call has used it */
		free(e);
		return &ps->uncached;
	}
	e->node.k1 = f->code;
	e->node.k2 = k2;
	lru_add(&ps->cache, &e->node);
	ps->stats.bytes += entry_bytes(e);
	return e;
}

void python_symbols_resolve(struct python_symbols *ps, pid_t pid, const struct python_offsets *off,
			    const struct interp_frame *f, struct sym_line *line)
{
	uint64_t stale_before = ps->stats.stale;
	struct code_entry *e;
	int l;

	memset(line, 0, sizeof(*line));
	e = lookup(ps, pid, off, f);
	if (!e) {
		line->function = ps->stats.stale != stale_before ? "[python code gone]" :
								   "[python code unreadable]";
		return;
	}
	line->function = e->name;
	line->file = e->file;
	l = e->table ?
		    python_line_for(off->minor, e->table, e->table_len, e->firstlineno, f->lasti) :
		    0;
	line->line = l > 0 ? l : e->firstlineno;
	if (e == &ps->uncached) {
		free(e->table);
		e->table = NULL;
	}
}

void python_symbols_get_stats(const struct python_symbols *ps, struct python_symbols_stats *out)
{
	*out = ps->stats;
}
