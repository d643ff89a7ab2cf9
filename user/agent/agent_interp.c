// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's Python and Ruby part: which processes run CPython or CRuby (told to the sampler at
 * each scan), their code objects' and iseqs' names, and their frames merged into a sample. */
#include <errno.h>

#include "agent/agent_int.h"
#include "interp/python_stack.h"
#include "interp/ruby_stack.h"
#include "util/log.h"

/* Entries the budget could hold at most, each with no line table: it sizes the cache's hash,
 * so the byte budget is always the bound that binds. */
static size_t entries_within(uint64_t budget, size_t entry_bytes)
{
	return (size_t)(budget / entry_bytes);
}

/* Names the table or cache whose constructor returned NULL; returns its -errno. */
static int open_failed(const char *part)
{
	return log_err(errno ? -errno : -ENOMEM, "set up %s", part);
}

int agent_interp_open(struct agent *a)
{
	struct agent_interp *in = &a->interp;
	const char *proc_root = a->cfg->proc_root;
	uint64_t budget = a->cfg->interp_cache_budget;

	errno = 0;
	in->budget = interp_budget_new(budget);
	if (!in->budget)
		return open_failed("the interpreter name cache budget");
	in->pyprocs = interp_procs_new(&python_interp, proc_root, a->cfg->max_procs);
	if (!in->pyprocs)
		return open_failed("the Python process table");
	in->pysyms = python_symbols_new(
		proc_root, entries_within(budget, python_symbols_entry_bytes()), in->budget);
	if (!in->pysyms)
		return open_failed("the Python symbol cache");
	in->rbprocs = interp_procs_new(&ruby_interp, proc_root, a->cfg->max_procs);
	if (!in->rbprocs)
		return open_failed("the Ruby process table");
	in->rbsyms = ruby_symbols_new(proc_root, entries_within(budget, ruby_symbols_entry_bytes()),
				      in->budget);
	if (!in->rbsyms)
		return open_failed("the Ruby symbol cache");
	return 0;
}

void agent_interp_close(struct agent *a)
{
	struct agent_interp *in = &a->interp;

	python_symbols_free(in->pysyms);
	interp_procs_free(in->pyprocs);
	ruby_symbols_free(in->rbsyms);
	interp_procs_free(in->rbprocs);
	interp_budget_free(in->budget);
	*in = (struct agent_interp){ 0 };
}

/* Tells the sampler whether and how to read pid's CPython frames. Returns 1 when the parse of
 * its interpreter file was put off, else 0. */
static int scan_python(struct agent *a, pid_t pid, const struct proc_maps *maps)
{
	const struct python_proc *py;
	int put_off, err;

	errno = 0;
	py = interp_procs_update(a->interp.pyprocs, pid, maps);
	put_off = !py && errno == EBUSY;
	err = loader_set_py_proc(a->loader, pid, py ? &py->bpf : NULL);

	if (err) {
		log_warn_from(pid, err, "pid %d: cannot tell the sampler about its CPython frames",
			      (int)pid);
		interp_procs_forget(a->interp.pyprocs, pid);
	}
	return put_off;
}

/* Tells the sampler whether and how to read pid's CRuby frames. Returns 1 when the parse of its
 * interpreter file was put off, else 0. */
static int scan_ruby(struct agent *a, pid_t pid, const struct proc_maps *maps)
{
	const struct ruby_proc *rb;
	int put_off, err;

	errno = 0;
	rb = interp_procs_update(a->interp.rbprocs, pid, maps);
	put_off = !rb && errno == EBUSY;
	err = loader_set_rb_proc(a->loader, pid, rb ? &rb->bpf : NULL);

	if (err) {
		log_warn_from(pid, err, "pid %d: cannot tell the sampler about its CRuby frames",
			      (int)pid);
		interp_procs_forget(a->interp.rbprocs, pid);
	}
	return put_off;
}

/* Full tables refuse pids without an error: their counters tell. */
static uint64_t tables_full(const struct agent *a)
{
	struct interp_procs_stats py, rb;

	interp_procs_get_stats(a->interp.pyprocs, &py);
	interp_procs_get_stats(a->interp.rbprocs, &rb);
	return py.full + rb.full;
}

int agent_interp_scan(struct agent *a, pid_t pid, const struct proc_maps *maps)
{
	uint64_t full = tables_full(a);
	int put_off = scan_python(a, pid, maps);

	put_off |= scan_ruby(a, pid, maps);
	if (tables_full(a) != full)
		return -ENOSPC;
	return put_off;
}

void agent_interp_forget(struct agent *a, pid_t pid)
{
	interp_procs_forget(a->interp.pyprocs, pid);
	interp_procs_forget(a->interp.rbprocs, pid);
}

void agent_interp_merge(struct agent *a, const struct sample *s)
{
	struct agent_interp *in = &a->interp;
	int ruby = s->interp && s->interp->interp == SPANPROF_INTERP_RUBY;
	const struct python_proc *py =
		s->interp && !ruby ? interp_procs_get(in->pyprocs, s->key->pid) : NULL;
	const struct ruby_proc *rb = ruby ? interp_procs_get(in->rbprocs, s->key->pid) : NULL;

	if (py)
		python_stack_merge(a->resolve, in->pysyms, s->key->pid, py, s->interp,
				   &in->py_frames_dropped);
	if (rb)
		ruby_stack_merge(a->resolve, in->rbsyms, s->key->pid, rb, s->interp,
				 &in->rb_frames_dropped);
}
