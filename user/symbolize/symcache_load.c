// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads of process-controlled files for the symbol cache: perf maps (owner, caps, the round's
 * load budget) and DWARF (within the DWARF memory budget, counted and logged). Evicting modules
 * to make room is the cache's own job (symcache.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/symcache_int.h"
#include "util/log.h"

static struct sc_file_id file_id(const struct stat *st)
{
	return (struct sc_file_id){ st->st_dev, st->st_ino, (uint64_t)st->st_size,
				    (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
					    (uint64_t)st->st_mtim.tv_nsec };
}

/* Frees p's perf map, if any, and takes its bytes off the perf map budget. */
static void drop_jit(struct symcache *sc, struct sc_pid *p)
{
	sc->st.perf_map_bytes -= perf_map_bytes(p->jit);
	perf_map_free(p->jit);
	p->jit = NULL;
}

/* 1 when holding `bytes` more for pid would pass the perf map budget (counted and logged). */
static int over_budget(struct symcache *sc, pid_t pid, size_t bytes)
{
	if (!sc->lim.perf_map_budget || sc->st.perf_map_bytes + bytes <= sc->lim.perf_map_budget)
		return 0;
	sc->st.perf_maps_over_budget++;
	log_warn(0,
		 "perf map of pid %d not kept: %zu KiB would pass the perf map budget "
		 "(%zu KiB held of %zu KiB)",
		 (int)pid, bytes >> 10, (size_t)sc->st.perf_map_bytes >> 10,
		 sc->lim.perf_map_budget >> 10);
	return 1;
}

/* Reads the perf map open at fd into p->jit: nothing when unchanged, the appended lines when it
 * only grew, else all of it when the per-process budget allows. A map that would pass the perf
 * map budget (all processes together) is not kept, and not read again until it changes and the
 * per-process budget allows. Returns 1 when it read. */
static int read_changed(struct symcache *sc, struct sc_pid *p, pid_t pid, int fd, uint64_t now_ns,
			int *capped)
{
	struct perf_map_limits lim = { sc->lim.perf_map_max_bytes, sc->lim.perf_map_max_lines };
	struct sc_file_id id, old = p->jit_file;
	struct perf_map *pm;
	struct stat st;

	if (fstat(fd, &st))
		return 0;
	id = file_id(&st);
	/* Unchanged since it was last read, kept or not: nothing new to find there. */
	if ((p->jit || p->jit_full_ns) && !memcmp(&id, &old, sizeof(id))) {
		sc->st.perf_map_rereads_skipped++;
		return 0;
	}
	p->jit_file = id;
	if (p->jit && id.dev == old.dev && id.ino == old.ino && id.size > old.size &&
	    perf_map_offset(p->jit) <= id.size) {
		size_t before = perf_map_bytes(p->jit);
		int err;

		/* A JIT appending: the new lines (none once the map is at its caps). */
		err = perf_map_append_fd(p->jit, fd, &lim, capped);
		sc->st.perf_map_bytes += perf_map_bytes(p->jit) - before;
		if (err == -ENOSPC) {
			sc->st.perf_map_rereads_skipped++;
			return 0;
		}
		if (over_budget(sc, pid, 0)) {
			drop_jit(sc, p);
			p->jit_full_ns = now_ns;
			return 0;
		}
		return 1;
	}
	/* Rewritten (or refused before): the map read from the old file no longer describes it. */
	drop_jit(sc, p);
	if (p->jit_full_ns && now_ns - p->jit_full_ns < SC_PERF_MAP_FULL_READ_NS) {
		sc->st.perf_map_rereads_skipped++; /* read again once the budget allows */
		p->jit_file = old; /* so that the next look sees the change again */
		return 0;
	}
	p->jit_full_ns = now_ns;
	pm = perf_map_read_fd(fd, &lim, capped);
	if (!pm)
		return 0;
	if (over_budget(sc, pid, perf_map_bytes(pm))) {
		perf_map_free(pm);
		return 0;
	}
	sc->st.perf_map_bytes += perf_map_bytes(pm);
	p->jit = pm;
	return 1;
}

void symcache_load_jit(struct symcache *sc, struct sc_pid *p, pid_t pid, uint64_t now_ns)
{
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
	if (fd >= 0) {
		read_changed(sc, p, pid, fd, now_ns, &capped);
		close(fd);
	}
	load_budget_end(&sc->budget);
	if (capped) {
		sc->st.perf_maps_capped++;
		log_warn(0, "perf map of pid %d cut short at the byte or line cap", (int)pid);
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
