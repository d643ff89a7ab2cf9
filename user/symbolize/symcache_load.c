// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads of process-controlled files for the symbol cache: perf maps (owner, caps, the round's
 * load budget) and DWARF (within the DWARF memory budget, counted and logged). Evicting modules
 * to make room is the cache's own job (symcache.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "symbolize/symcache_int.h"
#include "util/log.h"

void symcache_load_jit(struct symcache *sc, struct sc_pid *p, pid_t pid, uint64_t now_ns)
{
	struct perf_map_limits lim = { sc->lim.perf_map_max_bytes, sc->lim.perf_map_max_lines };
	struct perf_map *pm;
	int fd, capped = 0;

	if (!load_budget_begin(&sc->budget))
		return;
	p->jit_loaded_ns = now_ns;
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
	if (pm && sc->lim.perf_map_budget &&
	    sc->st.perf_map_bytes - perf_map_bytes(p->jit) + perf_map_bytes(pm) >
		    sc->lim.perf_map_budget) {
		sc->st.perf_maps_over_budget++;
		log_warn(0,
			 "perf map of pid %d not kept: %zu KiB would pass the perf map budget "
			 "(%zu KiB held of %zu KiB)",
			 (int)pid, perf_map_bytes(pm) >> 10, (size_t)sc->st.perf_map_bytes >> 10,
			 sc->lim.perf_map_budget >> 10);
		perf_map_free(pm);
		return;
	}
	if (pm) {
		sc->st.perf_map_bytes += perf_map_bytes(pm) - perf_map_bytes(p->jit);
		perf_map_free(p->jit);
		p->jit = pm;
	}
}

int symcache_load_dwarf(struct symcache *sc, struct sc_module *m)
{
	if (elf_syms_load_dwarf(m->es, sc->lim.max_dwarf_bytes)) {
		/* a debug file found only now tells its size only now */
		m->dwarf_bytes = elf_syms_dwarf_bytes(m->es);
		sc->st.dwarf_bytes += m->dwarf_bytes;
		return 1;
	}
	if (elf_syms_dwarf_refused(m->es)) {
		sc->st.dwarf_refused++;
		log_info(
			"DWARF of %s (%zu MB) exceeds the DWARF budget (%zu MB): symbol table only",
			elf_syms_debug_file(m->es) ?: "module", elf_syms_dwarf_bytes(m->es) >> 20,
			sc->lim.max_dwarf_bytes >> 20);
	}
	return 0;
}
