// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CRuby iseqs read from /proc/PID/mem into a bounded LRU cache. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "interp/ruby_symbols.h"
#include "interp/ruby_lines.h"
#include "util/lru.h"
#include "util/text_clean.h"

#define LABEL_MAX_LEN 128
#define PATH_MAX_LEN 256

/* k2 of a C function's name: IDs are never freed, so (pid, ID) names it for the process's life. */
#define CFUNC_KEY(pid) ((uint64_t)(uint32_t)(pid) << 32 | 0xffffffffu)

struct iseq_entry {
	struct lru_node node; /* k1 = iseq address, k2 = pid << 32 | raw first_lineno; or k1 = ID,
			       * k2 = CFUNC_KEY(pid): then label is the method's name */
	uint32_t check;
	int first_line;
	uid_t uid; /* the process's, whose budget share the entry counts in */
	char label[LABEL_MAX_LEN];
	char path[PATH_MAX_LEN];
	uint8_t *entries, *succ; /* insns_info body and succ table; NULL: not read */
	uint32_t nentries;
	size_t succ_len;
	size_t tables_bytes; /* asked of malloc for entries and succ */
};

struct ruby_symbols {
	const char *proc_root;
	size_t max_entries;
	struct lru cache;
	struct interp_budget *budget; /* NULL: none */
	size_t fixed; /* this structure and the hash */
	/* An iseq or name the budget refused: named from here until the next call; its line
	 * tables are freed before ruby_symbols_resolve() returns. */
	struct iseq_entry uncached;
	struct ruby_symbols_stats stats;
};

static int evict_for_budget(void *cache, uid_t uid);

struct ruby_symbols *ruby_symbols_new(const char *proc_root, size_t max_entries,
				      struct interp_budget *budget)
{
	struct ruby_symbols *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->proc_root = proc_root;
	rs->max_entries = max_entries ? max_entries : 1;
	if (lru_init(&rs->cache, rs->max_entries)) {
		free(rs);
		errno = ENOMEM;
		return NULL;
	}
	rs->fixed = sizeof(*rs) + rs->cache.nbuckets * sizeof(*rs->cache.buckets);
	if (budget &&
	    interp_budget_attach(budget, INTERP_CACHE_RUBY, rs, evict_for_budget, rs->fixed)) {
		lru_release(&rs->cache);
		free(rs);
		errno = ENOSPC;
		return NULL;
	}
	rs->budget = budget;
	rs->stats.bytes = rs->fixed;
	return rs;
}

static void free_entry(struct iseq_entry *e)
{
	free(e->entries);
	free(e->succ);
	free(e);
}

size_t ruby_symbols_entry_bytes(void)
{
	return sizeof(struct iseq_entry);
}

static void drop_entry(struct ruby_symbols *rs, struct lru_node *n)
{
	struct iseq_entry *e = lru_entry(n, struct iseq_entry, node);

	rs->stats.bytes -= sizeof(*e) + e->tables_bytes;
	if (rs->budget)
		interp_budget_give(rs->budget, INTERP_CACHE_RUBY, e->uid,
				   sizeof(*e) + e->tables_bytes);
	lru_del(&rs->cache, n);
	free_entry(e);
}

/* The budget needs room: uid's least recently used entry goes. */
static int evict_for_budget(void *cache, uid_t uid)
{
	struct ruby_symbols *rs = cache;
	struct lru_node *n;

	for (n = lru_oldest(&rs->cache); n; n = lru_newer(&rs->cache, n))
		if (lru_entry(n, struct iseq_entry, node)->uid == uid)
			break;
	if (!n)
		return -ENOENT;
	drop_entry(rs, n);
	rs->stats.evictions++;
	return 0;
}

void ruby_symbols_free(struct ruby_symbols *rs)
{
	struct lru_node *n;

	if (!rs)
		return;
	while ((n = lru_oldest(&rs->cache)))
		drop_entry(rs, n);
	if (rs->budget)
		interp_budget_detach(rs->budget, INTERP_CACHE_RUBY, rs->fixed);
	lru_release(&rs->cache);
	free(rs);
}

static int read_mem(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t got = pread(fd, buf, len, (off_t)addr);

	return got == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t read_u64(int fd, uint64_t addr, int *err)
{
	uint64_t v = 0;

	if (read_mem(fd, addr, &v, sizeof(v)))
		*err = -EFAULT;
	return v;
}

/* A String object into out (NUL-terminated, cut to size). */
static int read_rstring(int fd, const struct ruby_offsets *off, uint64_t str, char *out,
			size_t size)
{
	uint64_t flags, len, data;
	int err = 0;

	flags = read_u64(fd, str, &err);
	if (err || (flags & RUBY_T_MASK) != RUBY_T_STRING)
		return -EINVAL;
	if (flags & RUBY_FL_USER1) { /* RSTRING_NOEMBED */
		len = read_u64(fd, str + RUBY_STR_HEAP_LEN, &err);
		data = read_u64(fd, str + RUBY_STR_HEAP_PTR, &err);
	} else {
		len = off->str_embed_len_in_flags ? (flags >> 14) & 0x1f :
						    read_u64(fd, str + RUBY_STR_HEAP_LEN, &err);
		data = str + off->str_embed_data;
	}
	if (err)
		return err;
	if (len >= size)
		len = size - 1;
	if (read_mem(fd, data, out, len))
		return -EFAULT;
	out[len] = '\0';
	text_clean(out); /* the process's bytes: no newline or ESC into any output */
	return 0;
}

/* pathobj is a String, or an Array [path, realpath]: the path. */
static int read_path(int fd, const struct ruby_offsets *off, uint64_t pathobj, char *out,
		     size_t size)
{
	uint64_t flags, first;
	int err = 0;

	flags = read_u64(fd, pathobj, &err);
	if (err)
		return err;
	if ((flags & RUBY_T_MASK) != RUBY_T_ARRAY)
		return read_rstring(fd, off, pathobj, out, size);
	if (flags & RUBY_FL_USER1) /* RARRAY_EMBED_FLAG */
		first = read_u64(fd, pathobj + RUBY_ARY_EMBED, &err);
	else
		first = read_u64(fd, read_u64(fd, pathobj + RUBY_ARY_HEAP_PTR, &err), &err);
	return err ? err : read_rstring(fd, off, first, out, size);
}

/* Element i of an Array. Returns 0 or -EINVAL (not an Array, or too short). */
static int read_ary_elem(int fd, const struct ruby_offsets *off, uint64_t ary, uint64_t i,
			 uint64_t *out)
{
	uint64_t flags, len, ptr;
	int err = 0;

	flags = read_u64(fd, ary, &err);
	if (err || (flags & RUBY_T_MASK) != RUBY_T_ARRAY)
		return -EINVAL;
	if (flags & RUBY_FL_USER1) { /* RARRAY_EMBED_FLAG */
		len = (flags >> RUBY_ARY_EMBED_LEN_SHIFT) & off->ary_embed_len_mask;
		ptr = ary + RUBY_ARY_EMBED;
	} else {
		len = read_u64(fd, ary + RUBY_ARY_HEAP_LEN, &err);
		ptr = read_u64(fd, ary + RUBY_ARY_HEAP_PTR, &err);
	}
	if (err || i >= len)
		return -EINVAL;
	*out = read_u64(fd, ptr + 8 * i, &err);
	return err;
}

/* The name of ID id from the interpreter's symbol table at gs (symbol.c get_id_serial_entry). */
static int read_id_name(int fd, const struct ruby_offsets *off, uint64_t gs, uint64_t id, char *out,
			size_t size)
{
	uint64_t serial = id > RUBY_LAST_OP_ID ? id >> RUBY_ID_SCOPE_SHIFT : id, ids, chunk, str;
	uint32_t last_id;
	int err = 0;

	if (read_mem(fd, gs + RUBY_SYMBOLS_LAST_ID, &last_id, sizeof(last_id)) || !serial ||
	    serial > last_id)
		return -ENOENT;
	ids = read_u64(fd, gs + RUBY_SYMBOLS_IDS, &err);
	if (err || read_ary_elem(fd, off, ids, serial / RUBY_ID_ENTRY_UNIT, &chunk) ||
	    read_ary_elem(fd, off, chunk, (serial % RUBY_ID_ENTRY_UNIT) * RUBY_ID_ENTRY_SIZE, &str))
		return -ENOENT;
	return read_rstring(fd, off, str, out, size);
}

/* The line table: insns_info entries and, for more than one entry, the succ index table. Too
 * large or unreadable tables are left out (the first line is shown). */
static int read_lines(int fd, const struct ruby_offsets *off, uint64_t body, struct iseq_entry *e)
{
	uint64_t entries, succ;
	uint32_t n, iseq_size;
	size_t bytes;
	int err = 0;

	entries = read_u64(fd, body + off->insns_body, &err);
	succ = read_u64(fd, body + off->insns_succ, &err);
	if (err || read_mem(fd, body + off->insns_size, &n, sizeof(n)) ||
	    read_mem(fd, body + off->body_iseq_size, &iseq_size, sizeof(iseq_size)))
		return -EFAULT;
	if (!entries || !n || n > RUBY_SYMBOLS_MAX_INSN_ENTRIES ||
	    iseq_size > RUBY_SYMBOLS_MAX_ISEQ_SIZE || (n > 1 && !succ))
		return 0;
	bytes = (size_t)n * off->insn_entry_size;
	e->entries = malloc(bytes);
	if (!e->entries)
		return -ENOMEM;
	e->tables_bytes = bytes;
	if (read_mem(fd, entries, e->entries, bytes))
		return -EFAULT;
	e->nentries = n;
	if (n == 1)
		return 0;
	e->succ_len = ruby_succ_table_bytes(iseq_size);
	e->succ = malloc(e->succ_len);
	if (!e->succ)
		return -ENOMEM;
	e->tables_bytes += e->succ_len;
	return read_mem(fd, succ, e->succ, e->succ_len);
}

/* Reads the iseq and checks it is still the one BPF saw. Returns 0, -ESTALE or -errno. */
static int fill_entry(int fd, const struct ruby_offsets *off, const struct interp_frame *f,
		      struct iseq_entry *e)
{
	uint64_t body, loc[4];
	int err = 0;

	body = read_u64(fd, f->code + off->iseq_body, &err);
	if (err || !body || read_mem(fd, body + off->bpf.body_location, loc, sizeof(loc)))
		return -EFAULT;
	if ((uint32_t)loc[3] != f->firstlineno ||
	    (uint32_t)(loc[RUBY_LOC_LABEL / 8] ^ loc[RUBY_LOC_PATHOBJ / 8] ^ body) != f->check)
		return -ESTALE;
	e->check = f->check;
	e->first_line = off->first_lineno_fixnum ? (int)((int64_t)loc[3] >> 1) : (int32_t)loc[3];
	if (read_rstring(fd, off, loc[RUBY_LOC_LABEL / 8], e->label, sizeof(e->label)) ||
	    read_path(fd, off, loc[RUBY_LOC_PATHOBJ / 8], e->path, sizeof(e->path)))
		return -EFAULT;
	return read_lines(fd, off, body, e);
}

/* gs: the symbol table, for a C function's frame. */
static struct iseq_entry *load_entry(struct ruby_symbols *rs, pid_t pid,
				     const struct ruby_offsets *off, uint64_t gs,
				     const struct interp_frame *f)
{
	struct iseq_entry *e = calloc(1, sizeof(*e));
	struct stat st = { 0 };
	char path[64];
	int fd, err;

	if (!e)
		return NULL;
	snprintf(path, sizeof(path), "%s/%d/mem", rs->proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		err = -errno;
	else if (f->flags & SPANPROF_RB_FRAME_CFUNC)
		err = read_id_name(fd, off, gs, f->code, e->label, sizeof(e->label));
	else
		err = fill_entry(fd, off, f, e);
	e->uid = st.st_uid;
	if (fd >= 0)
		close(fd);
	if (err) {
		if (err == -ESTALE)
			rs->stats.stale++;
		else
			rs->stats.read_errors++;
		free_entry(e);
		return NULL;
	}
	return e;
}

static struct iseq_entry *lookup(struct ruby_symbols *rs, pid_t pid, const struct ruby_offsets *off,
				 uint64_t gs, const struct interp_frame *f)
{
	uint64_t k2 = f->flags & SPANPROF_RB_FRAME_CFUNC ?
			      CFUNC_KEY(pid) :
			      (uint64_t)(uint32_t)pid << 32 | f->firstlineno;
	struct lru_node *n = lru_find(&rs->cache, f->code, k2);
	struct iseq_entry *e;

	if (n && lru_entry(n, struct iseq_entry, node)->check == f->check) {
		rs->stats.hits++;
		lru_touch(&rs->cache, n);
		return lru_entry(n, struct iseq_entry, node);
	}
	if (n)
		drop_entry(rs, n);
	rs->stats.misses++;
	e = load_entry(rs, pid, off, gs, f);
	if (!e)
		return NULL;
	if (rs->cache.count >= rs->max_entries && (n = lru_oldest(&rs->cache))) {
		drop_entry(rs, n);
		rs->stats.evictions++;
	}
	if (rs->budget && interp_budget_take(rs->budget, INTERP_CACHE_RUBY, e->uid,
					     sizeof(*e) + e->tables_bytes)) {
		rs->stats.refused++;
		rs->uncached = *e; /* its tables are freed once this call has used them */
		free(e);
		return &rs->uncached;
	}
	e->node.k1 = f->code;
	e->node.k2 = k2;
	lru_add(&rs->cache, &e->node);
	rs->stats.bytes += sizeof(*e) + e->tables_bytes;
	return e;
}

/* A C function: its method's name, or the placeholder. */
static void resolve_cfunc(struct ruby_symbols *rs, pid_t pid, const struct ruby_offsets *off,
			  uint64_t gs, const struct interp_frame *f, struct sym_line *line)
{
	struct iseq_entry *e = gs && f->code ? lookup(rs, pid, off, gs, f) : NULL;

	line->function = e ? e->label : RUBY_CFUNC_PLACEHOLDER;
}

/* An uncached entry's tables go once its line is known: nothing past the budget stays. */
static void release_uncached(struct ruby_symbols *rs)
{
	free(rs->uncached.entries);
	free(rs->uncached.succ);
	rs->uncached.entries = rs->uncached.succ = NULL;
}

void ruby_symbols_resolve(struct ruby_symbols *rs, pid_t pid, const struct ruby_offsets *off,
			  uint64_t global_symbols, const struct interp_frame *f,
			  struct sym_line *line)
{
	uint64_t stale_before = rs->stats.stale;
	struct iseq_entry *e;
	int l;

	memset(line, 0, sizeof(*line));
	if (f->flags & SPANPROF_RB_FRAME_CFUNC) {
		resolve_cfunc(rs, pid, off, global_symbols, f, line);
		return;
	}
	e = lookup(rs, pid, off, global_symbols, f);
	if (!e) {
		line->function = rs->stats.stale != stale_before ? "[ruby code gone]" :
								   "[ruby code unreadable]";
		return;
	}
	line->function = e->label;
	line->file = e->path;
	l = ruby_line_for(e->succ, e->succ_len, e->entries, off->insn_entry_size, e->nentries,
			  f->lasti);
	line->line = l > 0 ? l : e->first_line;
	release_uncached(rs);
}

void ruby_symbols_get_stats(const struct ruby_symbols *rs, struct ruby_symbols_stats *out)
{
	*out = rs->stats;
}
