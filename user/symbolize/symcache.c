// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bounded symbolization cache: LRU of open ELF modules keyed by (dev, inode), LRU of per-pid
 * mapping snapshots, JIT perf maps per pid, and kallsyms (see symcache.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/addr_cache.h"
#include "symbolize/elf_syms.h"
#include "symbolize/load_budget.h"
#include "symbolize/perf_map.h"
#include "symbolize/sym_open.h"
#include "symbolize/symcache.h"
#include "symbolize/symcache_int.h"
#include "symbolize/symcache_kernel.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/lru.h"

/* A snapshot older than this is re-read when an address falls outside every mapping (dlopen). */
#define SNAPSHOT_REFRESH_NS NS_PER_S

/* Unlinks and frees a module, with its share of the byte and DWARF accounting. */
static void module_free(struct symcache *sc, struct sc_module *m)
{
	lru_del(&sc->modules, &m->node);
	sc->module_bytes -= m->bytes;
	sc->st.dwarf_bytes -= m->dwarf_bytes;
	elf_syms_free(m->es);
	free(m);
}

/* Evicts least recently used modules beyond the limits, never `keep` (the one being used).
 * The symbol byte budget closes only modules not used in this round: their frames' names may
 * still be in use, and a module closed after its process exited often cannot be reopened. Room
 * is made before a load (symbols_make_room); this catches a table larger than its estimate. */
static void modules_trim(struct symcache *sc, const struct sc_module *keep)
{
	struct lru_node *n = lru_oldest(&sc->modules), *newer;
	struct sc_module *m;
	int over_count;

	while (n && ((over_count = sc->modules.count > sc->lim.max_modules) ||
		     (sc->lim.max_bytes && sc->module_bytes > sc->lim.max_bytes))) {
		newer = lru_newer(&sc->modules, n);
		m = lru_entry(n, struct sc_module, node);
		if (m != keep && (over_count || m->round != sc->round)) {
			if (!over_count)
				sc->st.symbol_evictions++; /* the byte budget, not the count */
			module_free(sc, m);
			sc->st.evictions++;
		}
		n = newer;
	}
}

/* At a round's start: a module whose tables alone exceed the symbol budget is closed first
 * (it is reopened, within the load budget, when a later round needs it) rather than the
 * budget closing every other module; then the least recently used go until the rest fits. */
static void modules_trim_round(struct symcache *sc)
{
	struct lru_node *n = lru_oldest(&sc->modules), *newer;
	struct sc_module *m;

	for (; n && sc->lim.max_bytes && sc->module_bytes > sc->lim.max_bytes; n = newer) {
		newer = lru_newer(&sc->modules, n);
		m = lru_entry(n, struct sc_module, node);
		if (m->bytes <= sc->lim.max_bytes)
			continue;
		module_free(sc, m);
		sc->st.symbol_evictions++;
		sc->st.evictions++;
	}
	modules_trim(sc, NULL);
}

/* Closes least recently used modules not used in this round (never keep) until `need` more
 * bytes of symbol tables fit the symbol budget. Returns 0, or -ENOSPC (counted) when this
 * round's modules fill it: the open or read waits for a later round, as a spent load budget. */
static int symbols_make_room(struct symcache *sc, const struct sc_module *keep, size_t need)
{
	struct lru_node *n = lru_oldest(&sc->modules), *newer;
	struct sc_module *m;

	for (; n && sc->lim.max_bytes && sc->module_bytes + need > sc->lim.max_bytes; n = newer) {
		newer = lru_newer(&sc->modules, n);
		m = lru_entry(n, struct sc_module, node);
		if (m == keep || m->round == sc->round)
			continue;
		module_free(sc, m);
		sc->st.symbol_evictions++;
		sc->st.evictions++;
	}
	if (!sc->lim.max_bytes || sc->module_bytes + need <= sc->lim.max_bytes)
		return 0;
	sc->st.symbol_deferred++;
	return -ENOSPC;
}

/* Makes room for the tables m's next lookup may read for the first time. Returns 0 when they
 * fit, -ENOSPC when this round's modules fill the budget (deferred), -EFBIG when they alone
 * pass it (refused for as long as m stays open: counted and logged once). */
static int symbols_fit_tables(struct symcache *sc, struct sc_module *m, const char *path)
{
	size_t need;

	if (!sc->lim.max_bytes)
		return 0;
	if (!m->tables_need_known) { /* section headers: not for every address of a file */
		m->tables_need = elf_syms_tables_estimate(m->es);
		m->tables_need_known = 1;
	}
	need = m->tables_need;
	if (!need)
		return 0;
	if (m->bytes + need > sc->lim.max_bytes) {
		m->tables_refused = 1;
		sc->st.symbol_refused++;
		log_warn(-EFBIG,
			 "symbol tables of %s not read: %zu bytes pass the symbol budget of %zu",
			 path, m->bytes + need, sc->lim.max_bytes);
		return -EFBIG;
	}
	return symbols_make_room(sc, m, need);
}

/* Closes least recently used modules holding DWARF (never keep) until `need` more bytes fit
 * the DWARF budget. */
static void dwarf_make_room(struct symcache *sc, struct sc_module *keep, size_t need)
{
	struct lru_node *n = lru_oldest(&sc->modules), *newer;
	struct sc_module *m;
	int freed = 0;

	for (; n && sc->st.dwarf_bytes + need > sc->lim.max_dwarf_bytes; n = newer) {
		newer = lru_newer(&sc->modules, n);
		m = lru_entry(n, struct sc_module, node);
		if (m == keep || !m->dwarf_bytes)
			continue;
		module_free(sc, m);
		sc->st.dwarf_evictions++;
		freed = 1;
	}
	if (freed)
		malloc_trim(0); /* libdw's buffers are large; give them back to the system */
}

/* Decides once whether m's DWARF is loaded, within the DWARF and load budgets. Returns 0, or
 * -EAGAIN when the round's load budget is spent (decided in a later round). */
static int ensure_dwarf(struct symcache *sc, struct sc_module *m)
{
	size_t need;

	if (elf_syms_dwarf_decided(m->es))
		return 0;
	if (!load_budget_begin(&sc->budget))
		return -EAGAIN;
	need = elf_syms_dwarf_bytes(m->es);
	if (need <= sc->lim.max_dwarf_bytes)
		dwarf_make_room(sc, m, need);
	if (symcache_load_dwarf(sc, m))
		dwarf_make_room(sc, m, 0);
	if (load_budget_end(&sc->budget))
		log_info("loading the DWARF of %s took longer than a round's load budget",
			 elf_syms_debug_file(m->es) ?: "a module");
	return 0;
}

static struct sc_module *module_insert(struct symcache *sc, const struct proc_map *map,
				       struct elf_syms *es)
{
	struct sc_module *m = calloc(1, sizeof(*m));

	if (!m) {
		elf_syms_free(es);
		return NULL;
	}
	m->node.k1 = map->dev;
	m->node.k2 = map->inode;
	m->es = es;
	m->bytes = es ? elf_syms_size(es) : 0;
	m->last_used_ns = clock_mono_ns();
	m->round = sc->round;
	sc->module_bytes += m->bytes;
	lru_add(&sc->modules, &m->node);
	modules_trim(sc, m);
	return m;
}

static int record_build_id(struct sc_mapinfo *info, const struct elf_syms *es)
{
	const char *id = es ? elf_syms_build_id(es) : NULL;

	if (info->build_id || !id)
		return 0;
	info->build_id = strdup(id);
	return info->build_id ? 0 : -ENOMEM;
}

/* The open module behind snapshot mapping i, opening it on a miss. NULL when unusable. */
static struct sc_module *module_get(struct symcache *sc, struct sc_pid *p, size_t i, int count)
{
	const struct proc_map *map = &p->maps.maps[i];
	struct sc_mapinfo *info = &p->info[i];
	struct lru_node *n = lru_find(&sc->modules, map->dev, map->inode);
	struct elf_syms *es;

	if (n) {
		lru_entry(n, struct sc_module, node)->last_used_ns = clock_mono_ns();
		lru_touch(&sc->modules, n);
		sc->st.hits += count;
		record_build_id(info, lru_entry(n, struct sc_module, node)->es);
		return lru_entry(n, struct sc_module, node);
	}
	sc->st.misses += count;
	if (info->failed || symbols_make_room(sc, NULL, elf_syms_open_size()) ||
	    !load_budget_begin(&sc->budget))
		return NULL;
	es = sym_open_mapping(sc->lim.proc_root, sc->lim.debug_root, (pid_t)p->node.k1, map,
			      info->build_id);
	if (load_budget_end(&sc->budget))
		log_info("opening %s (pid %d) took longer than a round's load budget", map->path,
			 (int)p->node.k1);
	if (!es) {
		int err = -errno;

		info->failed = 1;
		sc->st.errors++;
		log_debug("cannot symbolize %s (pid %d): %s", map->path, (int)p->node.k1,
			  strerror(-err));
		/* a malformed file stays malformed; a vanished one may be found by another pid */
		if (err == -EINVAL || err == -ENOEXEC)
			return module_insert(sc, map, NULL);
		return NULL;
	}
	record_build_id(info, es);
	return module_insert(sc, map, es);
}

static void pid_free(struct symcache *sc, struct sc_pid *p)
{
	size_t i;

	lru_del(&sc->pids, &p->node);
	for (i = 0; i < p->maps.count; i++)
		free(p->info[i].build_id);
	free(p->info);
	proc_maps_release(&p->maps);
	sc->st.perf_map_bytes -= perf_map_bytes(p->jit);
	perf_map_free(p->jit);
	free(p);
}

static struct sc_pid *pid_get(struct symcache *sc, pid_t pid)
{
	struct lru_node *n = lru_find(&sc->pids, (uint64_t)pid, 0);

	if (!n)
		return NULL;
	lru_touch(&sc->pids, n);
	return lru_entry(n, struct sc_pid, node);
}

/* Finds or creates pid's entry, evicting the least recently used snapshots beyond max_pids. */
static struct sc_pid *pid_entry(struct symcache *sc, pid_t pid)
{
	struct sc_pid *p = pid_get(sc, pid);
	struct lru_node *old;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->node.k1 = (uint64_t)pid;
	lru_add(&sc->pids, &p->node);
	while (sc->pids.count > sc->lim.max_pids && (old = lru_oldest(&sc->pids)) != &p->node) {
		pid_free(sc, lru_entry(old, struct sc_pid, node));
		sc->st.evictions++;
	}
	return p;
}

int symcache_snapshot_pid(struct symcache *sc, pid_t pid)
{
	struct proc_maps maps;
	struct sc_mapinfo *info;
	struct sc_pid *p;
	size_t i;
	int err;

	err = proc_maps_read_at(sc->lim.proc_root, pid, &maps);
	if (!err && !maps.count && pid_get(sc, pid))
		err = -ESRCH; /* a zombie's maps are empty: keep what we saw while it lived */
	if (err) {
		proc_maps_release(&maps);
		if (err == -ENOENT || err == -ESRCH)
			return err;
		sc->st.errors++;
		return log_warn(err, "read maps (pid %d)", (int)pid);
	}
	info = calloc(maps.count ? maps.count : 1, sizeof(*info));
	p = info ? pid_entry(sc, pid) : NULL;
	if (!p) {
		free(info);
		proc_maps_release(&maps);
		return -ENOMEM;
	}
	for (i = 0; i < p->maps.count; i++)
		free(p->info[i].build_id);
	free(p->info);
	proc_maps_release(&p->maps);
	p->maps = maps;
	p->info = info;
	p->taken_ns = clock_mono_ns();
	p->jit_loaded_ns = 0;
	/* open every module now: after the process exits its files may be unreachable */
	for (i = 0; i < p->maps.count; i++)
		if (p->maps.maps[i].dev || p->maps.maps[i].inode)
			module_get(sc, p, i, 0);
	return 0;
}

int symcache_prepare_pid(struct symcache *sc, pid_t pid)
{
	return lru_find(&sc->pids, (uint64_t)pid, 0) ? 0 : symcache_snapshot_pid(sc, pid);
}

void symcache_forget_pid(struct symcache *sc, pid_t pid)
{
	struct lru_node *n = lru_find(&sc->pids, (uint64_t)pid, 0);

	if (n)
		pid_free(sc, lru_entry(n, struct sc_pid, node));
}

/* JIT code lives in anonymous memory: look it up in the process's perf map, re-reading the
 * file (at most once a second) when an address is missing, since JITs append to it. */
static void resolve_jit(struct symcache *sc, struct sc_pid *p, pid_t pid, uint64_t addr,
			struct sym_frame *out)
{
	const char *name = p->jit ? perf_map_find(p->jit, addr, NULL, NULL) : NULL;

	if (!name &&
	    (!p->jit_loaded_ns || clock_mono_ns() - p->jit_loaded_ns > SNAPSHOT_REFRESH_NS)) {
		symcache_load_jit(sc, p, pid, clock_mono_ns());
		name = p->jit ? perf_map_find(p->jit, addr, NULL, NULL) : NULL;
	}
	if (!name)
		return;
	out->nlines = 1;
	out->lines[0].function = name;
}

/* Takes in what m's symbol table holds now (its first lookup reads it), closing the least
 * recently used other modules not used in this round beyond the symbol budget. */
static void module_account(struct symcache *sc, struct sc_module *m)
{
	size_t bytes = elf_syms_size(m->es);

	m->round = sc->round;
	if (bytes == m->bytes)
		return;
	sc->module_bytes += bytes - m->bytes;
	m->bytes = bytes;
	m->tables_need_known = 0; /* a table was read: less may be left to read */
	modules_trim(sc, m);
}

/* Returns 1 when the frame may be cached (symbolized, or known to stay unsymbolized). */
static int fill_lines(struct symcache *sc, struct sc_module *m, const struct proc_map *map,
		      struct sym_frame *out)
{
	struct elf_sym_line lines[SYM_MAX_INLINE];
	uint64_t vaddr;
	int i, n, pending, refused;

	m->round = sc->round; /* in use this round: the frame points into it */
	out->mapping.build_id = elf_syms_build_id(m->es);
	if (elf_syms_file_to_vaddr(m->es, out->addr - map->start + map->offset, &vaddr))
		return 1;
	if (m->tables_refused)
		return 1; /* known to stay unsymbolized while m is open */
	if (ensure_dwarf(sc, m))
		return 0; /* deferred: a later round symbolizes it */
	/* Room within the symbol budget before any table is read, DWARF or not: a module with
	 * DWARF reads its symbol table for addresses DWARF does not answer. */
	switch (symbols_fit_tables(sc, m, map->path)) {
	case -EFBIG:
		return 1;
	case -ENOSPC:
		return 0; /* deferred: a later round symbolizes it */
	}
	/* A lookup that may read a table the first time (the sorted symbol index, Go's function
	 * table: tens of MB in a large binary) is a load like an open, within the round's budget. */
	pending = elf_syms_tables_pending(m->es);
	if (pending && !load_budget_begin(&sc->budget))
		return 0; /* deferred: a later round symbolizes it */
	n = elf_syms_lookup(m->es, vaddr, lines, SYM_MAX_INLINE);
	if (pending && load_budget_end(&sc->budget))
		log_info("reading the symbol tables of %s took longer than a round's load budget",
			 map->path);
	module_account(sc, m);
	refused = elf_syms_take_refusal(m->es);
	if (refused & ELF_SYMS_REFUSED_GO_TABLE) {
		sc->st.sections_refused++;
		log_warn(-EFBIG, "Go function table of %s not read: over its size cap", map->path);
	}
	if (refused & ELF_SYMS_REFUSED_STRTAB) {
		sc->st.sections_refused++;
		log_warn(-EBADMSG,
			 "symbols of %s not read: their string table does not end with a NUL byte",
			 map->path);
	}
	if (n < 0) {
		sc->st.errors++;
		return 0;
	}
	for (i = 0; i < n; i++) {
		out->lines[i].function = lines[i].function;
		out->lines[i].file = lines[i].file;
		out->lines[i].line = lines[i].line;
	}
	out->nlines = n;
	return 1;
}

/* The snapshot of pid holding addr, re-read if addr is unknown and the snapshot is stale. */
static const struct proc_map *find_map(struct symcache *sc, pid_t pid, uint64_t addr,
				       struct sc_pid **pp)
{
	struct sc_pid *p = pid_get(sc, pid);
	const struct proc_map *map;

	if (!p && symcache_snapshot_pid(sc, pid) == 0)
		p = pid_get(sc, pid);
	*pp = p;
	if (!p)
		return NULL;
	map = proc_maps_find(&p->maps, addr);
	if (map || clock_mono_ns() - p->taken_ns <= SNAPSHOT_REFRESH_NS)
		return map;
	if (symcache_snapshot_pid(sc, pid) == 0)
		return proc_maps_find(&p->maps, addr);
	p->taken_ns = clock_mono_ns(); /* gone: don't re-read maps for every unknown frame */
	return NULL;
}

void symcache_resolve_user(struct symcache *sc, pid_t pid, uint64_t addr, struct sym_frame *out)
{
	struct addr_cache_key key;
	const struct proc_map *map;
	struct sc_module *m;
	struct sc_pid *p;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	map = find_map(sc, pid, addr, &p);
	if (!p) {
		sc->st.errors++; /* never seen alive: nothing to symbolize with */
		return;
	}
	if (!map) {
		resolve_jit(sc, p, pid, addr, out);
		return;
	}
	out->has_mapping = 1;
	out->mapping = (struct sym_mapping){ map->start, map->end, map->offset, map->path, NULL };
	if (!map->dev && !map->inode) {
		/* [vdso] and friends: no file to read. Memory a JIT named (prctl
		 * PR_SET_VMA_ANON_NAME shows it as [anon:NAME]) is in its perf map. */
		if (!strncmp(map->path, "[anon:", 6))
			resolve_jit(sc, p, pid, addr, out);
		return;
	}
	key = (struct addr_cache_key){ map->dev, map->inode, addr - map->start + map->offset };
	if (addr_cache_get(sc->addrs, &key, out, &out->mapping.build_id)) {
		sc->st.hits++;
		return;
	}
	m = module_get(sc, p, map - p->maps.maps, 1);
	if (m && m->es && fill_lines(sc, m, map, out))
		addr_cache_put(sc->addrs, &key, out, out->mapping.build_id);
}

void symcache_release_idle(struct symcache *sc, uint64_t idle_ns)
{
	struct lru_node *n = lru_oldest(&sc->modules), *newer;
	uint64_t now = clock_mono_ns();
	struct sc_module *m;

	int freed = 0;

	for (; n; n = newer) {
		newer = lru_newer(&sc->modules, n);
		m = lru_entry(n, struct sc_module, node);
		if (m->es && elf_syms_dwarf_decided(m->es) && now - m->last_used_ns > idle_ns) {
			module_free(sc, m);
			freed = 1;
		}
	}
	/* libdw's buffers were large and malloc keeps freed heap by default: give it back. */
	if (freed)
		malloc_trim(0);
}

void symcache_resolve_kernel(struct symcache *sc, uint64_t addr, struct sym_frame *out)
{
	symcache_kernel_resolve(&sc->kernel, addr, out);
}

void symcache_new_round(struct symcache *sc)
{
	load_budget_new_round(&sc->budget);
	sc->round++;
	modules_trim_round(sc);
}

void symcache_get_stats(const struct symcache *sc, struct symcache_stats *out)
{
	*out = sc->st;
	out->loads_deferred = sc->budget.deferred;
	out->load_overruns = sc->budget.overruns;
	out->errors += sc->kernel.errors;
	out->modules = sc->modules.count;
	out->pids = sc->pids.count;
	out->kernel_symbol_bytes = ksyms_bytes(sc->kernel.ks);
	out->symbol_bytes = sc->module_bytes;
}

static int copy_limits(struct symcache_limits *dst, const struct symcache_limits *src)
{
	*dst = *src;
	dst->proc_root = strdup(src->proc_root ? src->proc_root : "/proc");
	dst->debug_root = strdup(src->debug_root ? src->debug_root : "/usr/lib/debug");
	dst->kallsyms_path = strdup(src->kallsyms_path ? src->kallsyms_path : "/proc/kallsyms");
	dst->perf_map_dir = strdup(src->perf_map_dir ? src->perf_map_dir : "/tmp");
	if (!dst->max_dwarf_bytes)
		dst->max_dwarf_bytes = SYMCACHE_DEFAULT_DWARF_BYTES;
	if (!dst->proc_root || !dst->debug_root || !dst->kallsyms_path || !dst->perf_map_dir)
		return -ENOMEM;
	return 0;
}

struct symcache *symcache_new(const struct symcache_limits *limits)
{
	struct symcache *sc;
	int err;

	if (!limits || !limits->max_modules || !limits->max_pids) {
		errno = EINVAL;
		return NULL;
	}
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		errno = ENOMEM;
		return NULL;
	}
	err = copy_limits(&sc->lim, limits);
	load_budget_init(&sc->budget, limits->load_budget_ns);
	if (!err)
		err = lru_init(&sc->modules, limits->max_modules);
	if (!err)
		err = lru_init(&sc->pids, limits->max_pids);
	if (!err)
		err = symcache_kernel_init(&sc->kernel, sc->lim.kallsyms_path, sc->lim.proc_root);
	if (!err) {
		sc->addrs = addr_cache_new(limits->max_addrs ? limits->max_addrs :
							       SYMCACHE_DEFAULT_ADDRS);
		err = sc->addrs ? 0 : -ENOMEM;
	}
	if (!err)
		return sc;
	symcache_free(sc);
	errno = -err;
	return NULL;
}

void symcache_free(struct symcache *sc)
{
	struct lru_node *n;

	if (!sc)
		return;
	while (sc->pids.buckets && (n = lru_oldest(&sc->pids)))
		pid_free(sc, lru_entry(n, struct sc_pid, node));
	while (sc->modules.buckets && (n = lru_oldest(&sc->modules)))
		module_free(sc, lru_entry(n, struct sc_module, node));
	lru_release(&sc->pids);
	lru_release(&sc->modules);
	symcache_kernel_release(&sc->kernel);
	addr_cache_free(sc->addrs);
	free((char *)sc->lim.proc_root);
	free((char *)sc->lim.debug_root);
	free((char *)sc->lim.kallsyms_path);
	free((char *)sc->lim.perf_map_dir);
	free(sc);
}
