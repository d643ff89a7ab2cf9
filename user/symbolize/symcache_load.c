// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads of process-controlled files for the symbol cache, within its budgets: perf maps (owner,
 * caps) and DWARF (the DWARF memory budget with LRU eviction, the per-round load budget). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include "symbolize/symcache_int.h"
#include "util/log.h"

void symcache_load_jit(struct symcache *sc, struct sc_pid *p, pid_t pid)
{
	struct perf_map_limits lim = { sc->lim.perf_map_max_bytes, sc->lim.perf_map_max_lines };
	struct perf_map *pm;
	int fd, capped = 0;

	if (!load_budget_begin(&sc->budget))
		return;
	p->jit_loaded_ns = symcache_now_ns();
	fd = perf_map_open(sc->lim.proc_root, sc->lim.perf_map_dir, pid);
	if (fd == -ELOOP || fd == -EINVAL || fd == -EPERM) {
		sc->st.perf_maps_refused++;
		log_warn(fd, "perf map of pid %d not read: %s", (int)pid,
			 fd == -ELOOP ? "a symlink" :
			 fd == -EPERM ? "not owned by the process's user" :
					"not a regular file");
	}
	pm = fd >= 0 ? perf_map_read_fd(fd, &lim, &capped) : NULL;
	if (fd >= 0)
		close(fd);
	load_budget_end(&sc->budget);
	if (capped) {
		sc->st.perf_maps_capped++;
		log_warn(0, "perf map of pid %d cut short at the byte or line cap", (int)pid);
	}
	if (pm) {
		perf_map_free(p->jit);
		p->jit = pm;
	}
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
		symcache_module_free(sc, m);
		sc->st.dwarf_evictions++;
		freed = 1;
	}
	if (freed)
		malloc_trim(0); /* libdw's buffers are large; give them back to the system */
}

int symcache_ensure_dwarf(struct symcache *sc, struct sc_module *m)
{
	size_t need;

	if (elf_syms_dwarf_decided(m->es))
		return 0;
	if (!load_budget_begin(&sc->budget))
		return -EAGAIN;
	need = elf_syms_dwarf_bytes(m->es);
	if (need <= sc->lim.max_dwarf_bytes)
		dwarf_make_room(sc, m, need);
	if (elf_syms_load_dwarf(m->es, sc->lim.max_dwarf_bytes)) {
		/* a debug file found only now tells its size only now */
		m->dwarf_bytes = elf_syms_dwarf_bytes(m->es);
		sc->st.dwarf_bytes += m->dwarf_bytes;
		dwarf_make_room(sc, m, 0);
	} else if (elf_syms_dwarf_refused(m->es)) {
		sc->st.dwarf_refused++;
		log_info(
			"DWARF of %s (%zu MB) exceeds the DWARF budget (%zu MB): symbol table only",
			elf_syms_debug_file(m->es) ?: "module", elf_syms_dwarf_bytes(m->es) >> 20,
			sc->lim.max_dwarf_bytes >> 20);
	}
	if (load_budget_end(&sc->budget))
		log_info("loading the DWARF of %s took longer than a round's load budget",
			 elf_syms_debug_file(m->es) ?: "a module");
	return 0;
}
