// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what one spanprof_span_set() call costs a thread whose spans come at a service's
 * pace, below the span-record budget (SPANPROF_SPAN_ENDS_PER_USER_S), so that every ended span
 * gets its record, with the agent's default options (off-CPU and span times on). bench_hook's
 * tight loop is far over the budget, and there the ring read skips to the last change.
 *
 * A thread makes SPANS_PER_S spans a second, a set and a clear each, with work between them:
 *  - busy: it spins between the calls (a CPU-bound thread: its ring is read when it is
 *    preempted, many changes at a time, or at the hook's uprobe entry every 256 changes);
 *  - blocking: each span is 50 us of spinning, then the thread sleeps until the next one (a
 *    thread that waits for every request: its ring is read at each switch-out, one span at a
 *    time).
 * The agent-with-calls phase runs twice for this executable's hook: with the agent's default
 * options, and with span times off (--span-stats-max 0: off-CPU and the ring reads at
 * switch-out stay, no span records are built, the span_ends ring is one page), each under its
 * own agent (both stay loaded for the whole run, each measured by its own programs' run time;
 * the one a phase does not use has no uprobe on its hooks), so the call's cost with and without
 * the per-span record work is measured in one run.
 * Each call is timed on the spot (time stamp counter around it: the hook in user space and its
 * uprobe entries); a thread's first call, with which it registers, is left out and printed apart
 * (once per thread), and the calls that took over 2 us (uprobe entries, and interrupts) are
 * counted apart too. A phase with the hook's semaphore raised by hand and no uprobe attached
 * times the hook's own path (record, ring, counter) with no BPF at all. The ring's reads at
 * switch-out run in the sched_switch program, which the scheduler charges to the thread that
 * comes on the CPU next, not to this one, so no clock of this thread sees them: the program's
 * run time is read from the kernel's run-time statistics over the phase and compared with a
 * phase of the same work without calls (same agent, same length), and the difference is divided
 * by the calls (each agent's programs priced against their own runs in the control phase), and
 * by the span records the phase sent. Per round: that control phase, then this executable's
 * hook (ABI version 3) and the ABI version 2 library (uprobe per call), each with no agent and
 * with the agent (version 3 also with span times off). Prints the median over rounds of each row
 * and of the ratios.
 * First, the ring read alone: its BPF time at thread exit for reads of 2, 32 and 128 changes
 * (print_exit_walks), the figure that other sessions' switches on a busy machine do not blur,
 * under each agent, and what span times add to it.
 * Then the read at a uprobe entry (print_uprobe_walks), by the same kind of difference.
 * Last, the span records' CPU at the budget (print_budget_ceiling): SPANPROF_SPAN_ENDS_PER_USER_S
 * records a second per user times a record's cost from this run: the read alone of 2 changes
 * (a read per record, the dearest kind of read per record, apart from other switches) and each
 * pace's in place.
 * BENCH_ROUNDS sets the rounds (5), BENCH_WALK_ONLY=1 runs the reads alone only.
 * Another spanprof agent on the machine that profiles every process would attach to this
 * benchmark's hooks too (its uprobe entries land in the call rows, and the "no agent" rows are
 * its): the benchmark runs from copies of itself and of the version 2 library without their
 * probe notes, which such agents look for, and attaches its own agent at the sites read from the
 * originals (objcopy; without it, it runs in place and says so). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/loader.h"
#include "bench_stats.h"
#include "hook_copies.h"
#include "hook_libs.h"
#include "spanprof_abi.h"
#include "util/log.h"

/* Half the budget: other spans of this process (none here) and a second's edges keep room. */
#define SPANS_PER_S 2000
#define BLOCKING_WORK_NS 50000ull
#define PHASE_NS 1000000000ull
#define DEFAULT_ROUNDS 5
/* A call timed longer than this was preempted inside: left out (and counted). */
#define PREEMPTED_NS 200000.0
/* A call timed longer than this entered the uprobe (or was interrupted): counted apart. */
#define SLOW_NS 2000.0

enum pace { PACE_BUSY, PACE_BLOCKING, PACE__COUNT };
static const char *const pace_names[PACE__COUNT] = { "busy", "blocking" };

enum phase_kind {
	PH_CONTROL,
	PH_V3_NONE,
	PH_V3_SEM, /* the semaphore raised by hand, no uprobe: the hook's own path */
	PH_V3_AGENT,
	PH_V3_TIMES_OFF, /* the agent with span times off */
	PH_V2_NONE,
	PH_V2_AGENT,
	PH__COUNT
};

/* The agent a phase runs under: none, or one of the two this benchmark loads. */
enum agent_kind { AGENT_NONE, AGENT_DEFAULT, AGENT_TIMES_OFF, AGENT__COUNT };

enum { LIB_V3, LIB_V2, LIB__COUNT };

/* What each phase calls, and under which agent. */
static const struct phase_spec {
	int lib; /* LIB_V3 or LIB_V2 (the control phase: the one whose semaphore it watches) */
	int calls; /* 0: the control phase, the same work with no calls */
	int by_hand; /* the semaphore raised by the benchmark, no uprobe attached */
	enum agent_kind agent;
} phase_specs[PH__COUNT] = {
	[PH_CONTROL] = { LIB_V3, 0, 0, AGENT_NONE },
	[PH_V3_NONE] = { LIB_V3, 1, 0, AGENT_NONE },
	[PH_V3_SEM] = { LIB_V3, 1, 1, AGENT_NONE },
	[PH_V3_AGENT] = { LIB_V3, 1, 0, AGENT_DEFAULT },
	[PH_V3_TIMES_OFF] = { LIB_V3, 1, 0, AGENT_TIMES_OFF },
	[PH_V2_NONE] = { LIB_V2, 1, 0, AGENT_NONE },
	[PH_V2_AGENT] = { LIB_V2, 1, 0, AGENT_DEFAULT },
};

/* Run time and runs of an agent's programs: the switch-out ones (sched_switch, and
 * sched_exit_tp, where the off-CPU stacks are taken) and the span hook's uprobe. */
struct prog_times {
	unsigned long long switch_ns, switch_runs, uprobe_ns, uprobe_runs;
};

/* One phase: a thread's calls and what they cost. */
struct phase {
	span_set_fn set; /* NULL: the control phase (the same work, no calls) */
	const struct spanprof_span *span;
	enum pace pace;
	enum agent_kind agent;
	const volatile unsigned short *semaphore; /* of the hook called */
	unsigned short expect; /* its value with only this benchmark's agent: 1 or 0 */
	int by_hand; /* the semaphore is raised by the benchmark, no uprobe attached */
	/* results */
	int foreign; /* another agent's uprobe was attached to the hook during the phase */
	double call_ns; /* time around the calls, per call (timer overhead included) */
	double slow_ns; /* of which calls over SLOW_NS, per call */
	double first_ns; /* the thread's first call, left out of the above */
	uint64_t calls, preempted, slow, wall_ns;
	uint64_t slow_ticks, first_ticks; /* in the counter's ticks */
	unsigned long long records; /* span records the phase sent (read by the benchmark) */
	/* over the phase, each agent's own (the control phase prices both agents' runs) */
	struct prog_times times[AGENT__COUNT];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A tick count for timing one call: the time stamp counter on x86-64, else CLOCK_MONOTONIC. */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
	unsigned int aux;

	return __rdtscp(&aux);
#else
	return mono_ns();
#endif
}

static void spin_until(uint64_t t)
{
	while (mono_ns() < t)
		;
}

/* One call (none for the control phase), timed; ticks of it added to *sum unless preempted (or
 * the thread's first, kept apart). */
static inline void timed_call(struct phase *p, const struct spanprof_span *span, uint64_t *sum,
			      uint64_t limit, uint64_t slow)
{
	uint64_t t0 = ticks(), t1;

	if (p->set)
		p->set(span);
	t1 = ticks();
	if (!p->first_ticks) {
		p->first_ticks = t1 - t0 ? t1 - t0 : 1;
		return;
	}
	if (t1 - t0 > limit) {
		p->preempted++;
		return;
	}
	if (t1 - t0 > slow) {
		p->slow++;
		p->slow_ticks += t1 - t0;
	}
	*sum += t1 - t0;
	p->calls++;
}

static void *run_phase(void *arg)
{
	struct phase *p = arg;
	const uint64_t period = 1000000000ull / SPANS_PER_S;
	uint64_t start = mono_ns(), t0 = ticks(), next = start, end = start + PHASE_NS, now;
	uint64_t sum = 0, limit = (uint64_t)PREEMPTED_NS; /* in ticks: ns until the rate is known */
	uint64_t slow = (uint64_t)SLOW_NS;
	struct timespec ts;
	double per_ns;

#if defined(__x86_64__)
	/* The counter's rate, roughly, for the preemption limit only (the result uses the
	 * phase's own rate, below). */
	spin_until(start + 1000000);
	per_ns = (double)(ticks() - t0) / (double)(mono_ns() - start);
	limit = (uint64_t)(PREEMPTED_NS * per_ns);
	slow = (uint64_t)(SLOW_NS * per_ns);
	start = next = mono_ns();
	end = start + PHASE_NS;
	t0 = ticks();
#endif
	while (next < end) {
		if (p->pace == PACE_BUSY) {
			spin_until(next);
		} else {
			ts.tv_sec = (time_t)(next / 1000000000ull);
			ts.tv_nsec = (long)(next % 1000000000ull);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
		if (p->set && *p->semaphore != p->expect)
			p->foreign = 1;
		timed_call(p, p->span, &sum, limit, slow);
		spin_until(next + (p->pace == PACE_BUSY ? period / 2 : BLOCKING_WORK_NS));
		timed_call(p, NULL, &sum, limit, slow);
		/* Never faster than the pace: a thread that was kept off the CPU does not catch
		 * up with a burst. */
		now = mono_ns();
		next += period;
		if (next < now)
			next = now;
	}
	now = mono_ns();
	p->wall_ns = now - start;
	per_ns = (double)(ticks() - t0) / (double)p->wall_ns;
	p->call_ns = p->calls ? (double)sum / per_ns / (double)p->calls : 0;
	p->slow_ns = p->calls ? (double)p->slow_ticks / per_ns / (double)p->calls : 0;
	p->first_ns = (double)p->first_ticks / per_ns;
	return NULL;
}

/* The agent's side of span times: the ring buffer read as the agent reads it. */
struct span_reader {
	struct ring_buffer *rb;
	atomic_int stop;
	atomic_ullong records;
};

static int ignore_event(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

static int count_record(void *ctx, void *data, size_t size)
{
	/* An entry holds one record or a ring read's records back to back. */
	(void)data;
	atomic_fetch_add(&((struct span_reader *)ctx)->records,
			 size / sizeof(struct spanprof_span_end));
	return 0;
}

static void *read_records(void *arg)
{
	struct span_reader *r = arg;

	/* BPF wakes the agent only when the buffer is half full: it reads at every drain too. */
	while (!atomic_load(&r->stop)) {
		ring_buffer__poll(r->rb, 20);
		ring_buffer__consume(r->rb);
	}
	ring_buffer__consume(r->rb);
	return NULL;
}

struct bench {
	/* by agent_kind: [AGENT_NONE] is NULL, the others loaded for the whole run */
	struct loader *l[AGENT__COUNT];
	struct span_reader reader;
	pthread_t reader_thread;
	const struct hook_lib *libs[LIB__COUNT];
};

/* Starts reading the span records of every loaded agent. Returns 0 or -1. */
static int reader_start(struct bench *b)
{
	atomic_store(&b->reader.stop, 0);
	return pthread_create(&b->reader_thread, NULL, read_records, &b->reader) ? -1 : 0;
}

static void reader_stop(struct bench *b)
{
	atomic_store(&b->reader.stop, 1);
	pthread_join(b->reader_thread, NULL);
}

/* Loads an agent and reads its span records with the others' (the first agent's process
 * events, ignored, start the reader's ring buffer). Called before the reader starts: libbpf's
 * ring_buffer__add must not race its poll. Returns the loader or NULL. */
static struct loader *agent_open(struct bench *b, const struct loader_options *lo)
{
	struct loader *l = loader_open(lo);

	if (!l) {
		fprintf(stderr, "bench_hook_paced: cannot load BPF (needs root): %s\n",
			strerror(errno));
		return NULL;
	}
	if (!b->reader.rb)
		b->reader.rb = loader_proc_events(l, ignore_event, NULL);
	if (!b->reader.rb || loader_add_span_ends(l, b->reader.rb, count_record, &b->reader)) {
		fprintf(stderr, "bench_hook_paced: cannot read span records\n");
		loader_close(l);
		return NULL;
	}
	return l;
}

static void prog_stats(struct loader *l, const char *name, unsigned long long *ns,
		       unsigned long long *runs)
{
	bench_stats_bpf_prog_fd(loader_prog_fd(l, name), ns, runs);
}

/* The span hook's uprobe program, whichever of the two the agent loaded for this kernel. */
static void uprobe_stats(struct loader *l, unsigned long long *ns, unsigned long long *runs)
{
	bench_stats_bpf_prog_fd(loader_hook_prog_fd(l, LOADER_HOOK_C), ns, runs);
}

static void read_prog_times(struct loader *const l[AGENT__COUNT], struct prog_times t[AGENT__COUNT])
{
	unsigned long long ns, runs;

	memset(t, 0, AGENT__COUNT * sizeof(*t));
	for (int i = 0; i < AGENT__COUNT; i++) {
		if (!l[i])
			continue;
		prog_stats(l[i], "on_sched_switch", &t[i].switch_ns, &t[i].switch_runs);
		prog_stats(l[i], "on_sched_exit", &ns, &runs);
		t[i].switch_ns += ns;
		t[i].switch_runs += runs;
		uprobe_stats(l[i], &t[i].uprobe_ns, &t[i].uprobe_runs);
	}
}

/* Runs phase p in a new thread (a thread the hooks never saw: it registers anew), with lib's
 * uprobe attached by p's agent, if any. Returns 0 or -1. */
static int measure(struct bench *b, struct phase *p, const struct hook_lib *lib,
		   uint64_t drops_out[SPANPROF_DROP__COUNT])
{
	struct prog_times t0[AGENT__COUNT], t1[AGENT__COUNT];
	uint64_t d0[SPANPROF_DROP__COUNT] = { 0 }, d1[SPANPROF_DROP__COUNT] = { 0 };
	struct loader *agent = b->l[p->agent];
	struct bpf_link *link = NULL;
	unsigned long long rec0;
	pthread_t t;

	p->semaphore = lib->semaphore;
	/* Raised by hand only while no uprobe counts in it: the kernel keeps that count, and
	 * lowering what it raised would push it below zero. Lowered by one after, not set to 0:
	 * an agent that attached meanwhile keeps its count. */
	if (p->by_hand && *lib->semaphore) {
		p->by_hand = 0;
		p->foreign = 1;
	}
	p->expect = agent || p->by_hand ? 1 : 0;
	if (p->by_hand)
		*(volatile unsigned short *)lib->semaphore += 1;

	if (agent) {
		link = loader_attach_hook(agent, lib->path, lib->site.nop5_offset,
					  lib->site.semaphore_offset, LOADER_HOOK_C, 0);
		if (!link) {
			fprintf(stderr, "bench_hook_paced: attach to %s: %s\n", lib->path,
				strerror(errno));
			return -1;
		}
		loader_read_drops(agent, d0, SPANPROF_DROP__COUNT);
	}
	rec0 = atomic_load(&b->reader.records);
	read_prog_times(b->l, t0);
	if (pthread_create(&t, NULL, run_phase, p)) {
		bpf_link__destroy(link);
		return -1;
	}
	pthread_join(t, NULL);
	if (p->by_hand)
		*(volatile unsigned short *)lib->semaphore -= 1;
	read_prog_times(b->l, t1);
	bpf_link__destroy(link);
	/* Records of this phase still in the buffer: let the reader take them. */
	usleep(60000);
	if (agent) {
		loader_read_drops(agent, d1, SPANPROF_DROP__COUNT);
		for (int i = 0; i < SPANPROF_DROP__COUNT; i++)
			drops_out[i] += d1[i] - d0[i];
	}
	p->records = atomic_load(&b->reader.records) - rec0;
	for (int i = 0; i < AGENT__COUNT; i++) {
		p->times[i].switch_ns = t1[i].switch_ns - t0[i].switch_ns;
		p->times[i].switch_runs = t1[i].switch_runs - t0[i].switch_runs;
		p->times[i].uprobe_ns = t1[i].uprobe_ns - t0[i].uprobe_ns;
		p->times[i].uprobe_runs = t1[i].uprobe_runs - t0[i].uprobe_runs;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What an agent phase cost over the control phase: per call, and per span record it sent. */
struct agent_figures {
	double call; /* the call in place (the hook and its uprobe entries) */
	double bpf; /* the switch-out programs' time the phase added, per call */
	double total; /* the two */
	double uprobe; /* the uprobe's program, per call (inside the call above) */
	/* per span record the phase sent (0: it sent none): the switch-out's BPF time, the uprobe
	 * program's (ABI v3: its reads at entries, and the thread's registration; ABI v2: an entry
	 * per call), the two (BPF), and all of the phase's cost (calls and switch-outs) */
	double rec_switch, rec_uprobe, rec_bpf, rec_all;
};

/* Per-round figures of one pace. */
struct round_figures {
	double v3_none, v2_none;
	struct agent_figures v3, v3_off, v2; /* default options; span times off; ABI v2 */
	/* span times on less off, in the same round: per call, the call, the switch-out's BPF and
	 * the uprobe program's; and their BPF per record of the default-options phase */
	double on_less_off_call, on_less_off_bpf, on_less_off_uprobe, rec_times;
	double v3_sem; /* semaphore up, no uprobe: the hook's own path */
	double v3_slow_per_s, v3_slow_each_us, v3_slow_ns; /* v3 agent calls over SLOW_NS */
	double v3_entries_per_s, v3_entry_bpf_us; /* uprobe entries (its program's runs) */
	double v3_first_us, v3_none_first_us; /* a thread's first call, with and without agent */
};

/* The sched_switch programs' time a phase added over the control phase, per call of it. The
 * programs run at every switch of the machine, and other processes' switches come and go: the
 * phase's runs are priced at the control phase's average for the same agent's programs, and
 * what is left over is this thread's. */
static double switch_per_call(const struct phase *p, const struct phase *ctl)
{
	const struct prog_times *own = &p->times[p->agent], *base_of = &ctl->times[p->agent];
	double base = base_of->switch_runs ? (double)base_of->switch_ns / base_of->switch_runs : 0;

	return p->calls ? ((double)own->switch_ns - base * own->switch_runs) / (double)p->calls : 0;
}

static void agent_figures(const struct phase *p, const struct phase *ctl, struct agent_figures *a)
{
	double per_rec = p->records ? (double)p->calls / (double)p->records : 0;

	a->call = p->call_ns - ctl->call_ns;
	a->bpf = switch_per_call(p, ctl);
	a->total = a->call + a->bpf;
	a->uprobe = p->calls ? (double)p->times[p->agent].uprobe_ns / (double)p->calls : 0;
	a->rec_switch = a->bpf * per_rec;
	a->rec_uprobe = a->uprobe * per_rec;
	a->rec_bpf = a->rec_switch + a->rec_uprobe;
	a->rec_all = a->total * per_rec;
}

/* One round of a pace: 0, -1 on failure, 1 when another agent (one that profiles every process)
 * was attached to a hook the round called: its uprobe entries are then in the call rows (and
 * the "no agent" rows are its), while the switch-out rows are this agent's program only.
 * records_sum and spans gather each phase's records and spans over the rounds. */
static int run_round(struct bench *b, const struct spanprof_span *span, enum pace pace,
		     struct round_figures *f, uint64_t drops_sum[SPANPROF_DROP__COUNT],
		     unsigned long long records_sum[PH__COUNT], uint64_t spans[PH__COUNT])
{
	uint64_t drops[SPANPROF_DROP__COUNT] = { 0 };
	struct phase ph[PH__COUNT];
	const struct phase *ctl = &ph[PH_CONTROL];
	int ret = 0;

	memset(ph, 0, sizeof(ph));
	for (int i = 0; i < PH__COUNT; i++) {
		const struct phase_spec *s = &phase_specs[i];

		ph[i].span = span;
		ph[i].pace = pace;
		ph[i].agent = s->agent;
		ph[i].by_hand = s->by_hand;
		ph[i].set = s->calls ? b->libs[s->lib]->set : NULL;
		if (measure(b, &ph[i], b->libs[s->lib], drops))
			return -1;
	}
	for (int i = 0; i < SPANPROF_DROP__COUNT; i++)
		drops_sum[i] += drops[i];
	for (int i = 0; i < PH__COUNT; i++) {
		records_sum[i] += ph[i].records;
		spans[i] += ph[i].calls / 2;
	}
	f->v3_none = ph[PH_V3_NONE].call_ns - ctl->call_ns;
	f->v3_sem = ph[PH_V3_SEM].call_ns - ctl->call_ns;
	{
		const struct phase *a = &ph[PH_V3_AGENT];
		const struct prog_times *t = &a->times[a->agent];
		double s = (double)a->wall_ns / 1e9;

		f->v3_slow_per_s = (double)a->slow / s;
		f->v3_slow_each_us = a->slow ? a->slow_ns * (double)a->calls / a->slow / 1000 : 0;
		f->v3_slow_ns = a->slow_ns;
		/* The first call's entry is not among the calls. */
		f->v3_entries_per_s = t->uprobe_runs ? (double)(t->uprobe_runs - 1) / s : 0;
		f->v3_entry_bpf_us =
			t->uprobe_runs ? (double)t->uprobe_ns / t->uprobe_runs / 1000 : 0;
		f->v3_first_us = a->first_ns / 1000;
		f->v3_none_first_us = ph[PH_V3_NONE].first_ns / 1000;
	}
	agent_figures(&ph[PH_V3_AGENT], ctl, &f->v3);
	agent_figures(&ph[PH_V3_TIMES_OFF], ctl, &f->v3_off);
	agent_figures(&ph[PH_V2_AGENT], ctl, &f->v2);
	f->v2_none = ph[PH_V2_NONE].call_ns - ctl->call_ns;
	f->on_less_off_call = f->v3.call - f->v3_off.call;
	f->on_less_off_bpf = f->v3.bpf - f->v3_off.bpf;
	f->on_less_off_uprobe = f->v3.uprobe - f->v3_off.uprobe;
	/* Per record of the default-options phase, which sends one for each span. */
	f->rec_times = ph[PH_V3_AGENT].records ? (f->on_less_off_bpf + f->on_less_off_uprobe) *
							 (double)ph[PH_V3_AGENT].calls /
							 (double)ph[PH_V3_AGENT].records :
						 0;
	for (int i = 0; i < PH__COUNT; i++)
		if (ph[i].foreign)
			ret = 1;
	for (int i = 0; i < PH__COUNT; i++)
		if (ph[i].preempted > ph[i].calls / 100)
			fprintf(stderr, "  (phase %d: %llu calls preempted inside, left out)\n", i,
				(unsigned long long)ph[i].preempted);
	return ret;
}

#define MEDIAN_OF(field)                            \
	({                                          \
		double v_[64];                      \
		for (int r_ = 0; r_ < rounds; r_++) \
			v_[r_] = f[r_].field;       \
		median(v_, rounds);                 \
	})

static void print_row(const char *label, double ns)
{
	printf("  %-46s %9.1f ns per call\n", label, ns);
}

/* An agent phase's BPF time per span record it sent. */
#define PRINT_PER_RECORD(a, uprobe_runs)                                                          \
	printf("    ... per span record: switch-out %.1f ns, the uprobe's program %.1f ns (%s): " \
	       "BPF %.1f ns; calls and switch-outs in all %.1f ns\n",                             \
	       MEDIAN_OF(a.rec_switch), MEDIAN_OF(a.rec_uprobe), uprobe_runs,                     \
	       MEDIAN_OF(a.rec_bpf), MEDIAN_OF(a.rec_all))

static void print_pace(enum pace pace, const struct round_figures *f, int rounds,
		       const uint64_t *drops, const unsigned long long records[PH__COUNT],
		       const uint64_t spans[PH__COUNT])
{
	double ratio[64];

	for (int r = 0; r < rounds; r++)
		ratio[r] = f[r].v3.total > 0 ? f[r].v2.total / f[r].v3.total : 0;
	printf("\n== %s: %d spans/s (a set and a clear each), every span's record sent; median of "
	       "%d rounds ==\n",
	       pace_names[pace], SPANS_PER_S, rounds);
	print_row("ABI v3, no agent", MEDIAN_OF(v3_none));
	print_row("ABI v3, semaphore up, no uprobe (hook alone)", MEDIAN_OF(v3_sem));
	print_row("ABI v3, agent: the call (hook + uprobe entries)", MEDIAN_OF(v3.call));
	printf("    ... of it, calls over %.0f us (uprobe entries, interrupts): %.1f a second, %.1f us "
	       "each: %.1f ns per call; uprobe entries %.1f a second, its program %.1f us each\n",
	       SLOW_NS / 1000, MEDIAN_OF(v3_slow_per_s), MEDIAN_OF(v3_slow_each_us),
	       MEDIAN_OF(v3_slow_ns), MEDIAN_OF(v3_entries_per_s), MEDIAN_OF(v3_entry_bpf_us));
	printf("    ... not in it: a thread's first call, %.1f us with the agent (it registers), "
	       "%.1f us without\n",
	       MEDIAN_OF(v3_first_us), MEDIAN_OF(v3_none_first_us));
	print_row("ABI v3, agent: ring reads at switch-out (BPF)", MEDIAN_OF(v3.bpf));
	PRINT_PER_RECORD(v3, "its reads at entries, and the registration");
	print_row("ABI v3, agent, default options: in all", MEDIAN_OF(v3.total));
	print_row("ABI v3, agent, span times off: the call", MEDIAN_OF(v3_off.call));
	print_row("ABI v3, agent, span times off: switch-out (BPF)", MEDIAN_OF(v3_off.bpf));
	print_row("ABI v3, agent, span times off: in all", MEDIAN_OF(v3_off.total));
	printf("    ... span times on less off, per call (median of per-round differences): the "
	       "call %+.1f ns, switch-out %+.1f ns, the uprobe's program %+.1f ns; BPF per span "
	       "record %+.1f ns\n",
	       MEDIAN_OF(on_less_off_call), MEDIAN_OF(on_less_off_bpf),
	       MEDIAN_OF(on_less_off_uprobe), MEDIAN_OF(rec_times));
	print_row("ABI v2, no agent", MEDIAN_OF(v2_none));
	print_row("ABI v2, agent: the call (uprobe per call)", MEDIAN_OF(v2.call));
	print_row("ABI v2, agent: switch-out (BPF)", MEDIAN_OF(v2.bpf));
	PRINT_PER_RECORD(v2, "an entry per call");
	printf("  %-46s %9.1f ns per call   (%.1fx ABI v3, median of per-round ratios)\n",
	       "ABI v2, agent, default options: in all", MEDIAN_OF(v2.total),
	       median(ratio, rounds));
	printf("    ... the uprobe's BPF program alone: v3 %.1f ns, v2 %.1f ns per call\n",
	       MEDIAN_OF(v3.uprobe), MEDIAN_OF(v2.uprobe));
	printf("    ... span records read: v3 %llu for %llu spans, v3 span times off %llu for %llu "
	       "spans, v2 %llu for %llu spans; refused (user's share): %llu, lost (buffer full): "
	       "%llu, ring changes lost: %llu\n",
	       records[PH_V3_AGENT], (unsigned long long)spans[PH_V3_AGENT],
	       records[PH_V3_TIMES_OFF], (unsigned long long)spans[PH_V3_TIMES_OFF],
	       records[PH_V2_AGENT], (unsigned long long)spans[PH_V2_AGENT],
	       (unsigned long long)drops[SPANPROF_DROP_SPAN_END_BUDGET],
	       (unsigned long long)drops[SPANPROF_DROP_SPAN_END_FULL],
	       (unsigned long long)drops[SPANPROF_DROP_SPAN_RING_LOST]);
}

/* ---- The ring read alone: a thread's changes read when it exits ----
 * A thread makes n changes (set and clear in turn, from its first call, which registers it) and
 * exits: sched_process_exit reads its ring, and that program runs for nothing else but the
 * machine's few other thread exits, so its run time per thread is the read's (batched, as at a
 * switch-out). Threads are paced to stay under the span-record budget. */
struct exit_walk {
	const struct spanprof_span *span;
	int changes;
};

static void *make_changes(void *arg)
{
	const struct exit_walk *w = arg;

	for (int i = 0; i < w->changes; i++)
		spanprof_span_set(i & 1 ? NULL : w->span);
	return NULL;
}

/* The BPF time and runs of the program that reads a walk's ring. */
typedef void (*walk_stats_fn)(struct loader *l, unsigned long long *ns, unsigned long long *runs);

static void exit_stats(struct loader *l, unsigned long long *ns, unsigned long long *runs)
{
	prog_stats(l, "on_thread_exit", ns, runs);
}

/* BPF ns per thread whose `changes` changes the program stats() times reads: threads run one at a
 * time, each making its changes and exiting, paced to stay under the span-record budget. */
static double walk_ns(struct loader *l, const struct spanprof_span *span, int changes, int threads,
		      walk_stats_fn stats)
{
	struct exit_walk w = { .span = span, .changes = changes };
	unsigned long long ns0, runs0, ns1, runs1;
	/* records a second, below the budget */
	const double gap_s = (changes / 2.0) / (SPANS_PER_S);
	pthread_t t;
	int done = 0;

	stats(l, &ns0, &runs0);
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&t, NULL, make_changes, &w))
			break;
		pthread_join(t, NULL);
		done++;
		usleep((useconds_t)(gap_s * 1e6));
	}
	stats(l, &ns1, &runs1);
	return done ? (double)(ns1 - ns0) / done : 0;
}

/* The reads alone: changes a thread makes before it exits. */
#define EXIT_WALKS 3
static const int walk_changes[EXIT_WALKS] = { 2, 32, 128 };

/* Prints the reads alone under agent (default options or span times off), their BPF ns per
 * read into ns. Returns 0 or -1 (ns untouched). */
static int print_exit_walks(struct bench *b, const struct spanprof_span *span,
			    enum agent_kind agent, double ns[EXIT_WALKS])
{
	const int *changes = walk_changes;
	struct loader *l = b->l[agent];
	int times = agent == AGENT_DEFAULT;
	struct bpf_link *link;

	link = loader_attach_hook(l, b->libs[LIB_V3]->path, b->libs[LIB_V3]->site.nop5_offset,
				  b->libs[LIB_V3]->site.semaphore_offset, LOADER_HOOK_C, 0);
	if (!link)
		return -1;
	printf("\n== the ring read alone (ABI v3, %s): BPF time of a read at thread exit, %s ==\n",
	       times ? "default options" : "span times off",
	       times ? "every span's record sent" : "no span records");
	for (int i = 0; i < EXIT_WALKS; i++) {
		ns[i] = walk_ns(l, span, changes[i], 200, exit_stats);
		printf("  %3d changes (%3d %s): %8.0f ns per read, %6.1f ns per change\n",
		       changes[i], changes[i] / 2, times ? "records" : "spans  ", ns[i],
		       ns[i] / changes[i]);
	}
	printf("    ... a change read with others costs %.1f ns (from the 32 and 128 rows)\n",
	       (ns[2] - ns[1]) / (changes[2] - changes[1]));
	bpf_link__destroy(link);
	return 0;
}

/* What span times add to the reads alone: on less off, per read and per record. */
static void print_exit_walk_records(const double on[EXIT_WALKS], const double off[EXIT_WALKS])
{
	printf("    ... span times on less off:");
	for (int i = 0; i < EXIT_WALKS; i++)
		printf("%s %d changes %.0f ns a read, %.1f ns a record", i ? ";" : "",
		       walk_changes[i], on[i] - off[i], (on[i] - off[i]) / (walk_changes[i] / 2));
	printf("\n");
}

/* ---- The ring read at a uprobe entry ----
 * A thread's hook enters the uprobe at its first call (registering its area) and again when
 * SPANPROF_RING_TRAP_EVERY changes were queued since: that entry reads the whole ring, the read
 * a busy thread gets on an idle CPU. The uprobe program's run time per thread for threads making
 * SPANPROF_RING_TRAP_EVERY + 2 changes, less that for threads making 2 (the registration only),
 * is one read of SPANPROF_RING_TRAP_EVERY changes there. Paced under the budget as above. */
static int print_uprobe_walks(struct bench *b, const struct spanprof_span *span)
{
	const int n = SPANPROF_RING_TRAP_EVERY;
	struct loader *l = b->l[AGENT_DEFAULT];
	struct bpf_link *link;
	double reg, full;

	link = loader_attach_hook(l, b->libs[LIB_V3]->path, b->libs[LIB_V3]->site.nop5_offset,
				  b->libs[LIB_V3]->site.semaphore_offset, LOADER_HOOK_C, 0);
	if (!link)
		return -1;
	reg = walk_ns(l, span, 2, 100, uprobe_stats);
	full = walk_ns(l, span, n + 2, 40, uprobe_stats);
	printf("\n== the ring read at a uprobe entry (ABI v3, default options), every span's record "
	       "sent ==\n");
	printf("  registration entry (2 changes a thread):   %8.0f ns per thread\n", reg);
	printf("  + one entry reading %d changes (%d records): %8.0f ns per read, %6.1f ns per "
	       "change\n",
	       n, n / 2, full - reg, (full - reg) / n);
	bpf_link__destroy(link);
	return 0;
}

/* ---- The span records' CPU at the budget ---- */

/* One line of it: ns of CPU per record (or span) at the budget's rate. */
static void print_at_budget(const char *head, const char *what, double ns)
{
	double ns_per_s = ns * SPANPROF_SPAN_ENDS_PER_USER_S;

	printf("  %-9s %-58s %7.1f ns", head, what, ns);
	if (ns > 0)
		printf(" -> %5.2f ms of CPU a second (%.3f%% of one CPU)\n", ns_per_s / 1e6,
		       ns_per_s / 1e7);
	else
		printf(" -> not measured: other switches on the machine moved the control "
		       "phase's price more than this\n");
}

/* What the span records can cost a user at most: the budget's records a second, each priced as
 * this run measured it. A read that sends one record is the dearest kind per record: the ring
 * read alone of 2 changes (read_on; read_off with span times off) prices it apart from other
 * switches (with the colder caches of a thread exit). Then each pace's in place, beside the
 * whole hook at that span rate for both ABIs. */
static void print_budget_ceiling(struct round_figures f_pace[PACE__COUNT][64], int rounds,
				 int paces, const double read_on[EXIT_WALKS],
				 const double read_off[EXIT_WALKS])
{
	printf("\n== the span records' CPU at the budget: %d records a second per user "
	       "(SPANPROF_SPAN_ENDS_PER_USER_S) x a record's cost measured above ==\n",
	       SPANPROF_SPAN_ENDS_PER_USER_S);
	if (read_on[0] > 0) {
		print_at_budget("alone", "a read of 1 record (2 changes, at thread exit)",
				read_on[0]);
		if (read_off[0] > 0)
			print_at_budget("", "  of it, what span times add (on less off)",
					read_on[0] - read_off[0]);
	}
	for (int pace = 0; pace < paces; pace++) {
		const struct round_figures *f = f_pace[pace];

		print_at_budget(pace_names[pace], "ABI v3, the reads' BPF per record in place",
				MEDIAN_OF(v3.rec_bpf));
		print_at_budget("", "  of it, what span times add (on less off)",
				MEDIAN_OF(rec_times));
		print_at_budget("", "ABI v3, calls and switch-outs in all, per span",
				MEDIAN_OF(v3.rec_all));
		print_at_budget("", "ABI v2 at that span rate, calls and switch-outs, per span",
				MEDIAN_OF(v2.rec_all));
	}
	if (paces)
		printf("    ... in place: median of %d rounds\n", rounds);
}

int main(int argc, char **argv)
{
	struct loader_options lo = {
		.frequency = 100,
		.stack_entries = 1024,
		.count_entries = 1024,
		.off_cpu = 1,
		.off_cpu_entries = 1024,
		.off_cpu_min_ns = 1000000,
		.span_times = 1,
	};
	struct spanprof_span span = { .abi_version = SPANPROF_SPAN_ABI_VERSION, .name = "bench" };
	struct round_figures f[PACE__COUNT][64];
	char exe[4096], v2_path[4200];
	const char *env = getenv("BENCH_ROUNDS");
	int rounds = env ? atoi(env) : DEFAULT_ROUNDS, stats_fd, err = 0, paces = 0;
	int walk_only = getenv("BENCH_WALK_ONLY") != NULL;
	double read_on[EXIT_WALKS] = { 0 }, read_off[EXIT_WALKS] = { 0 };
	struct hook_lib v3, v2;
	struct bench b = { .libs = { [LIB_V3] = &v3, [LIB_V2] = &v2 } };

	(void)argc;
	hook_copies_reexec("bench_hook_paced", argv);
	if (rounds < 1 || rounds > 64)
		rounds = DEFAULT_ROUNDS;
	log_set_level(LOG_LEVEL_WARN);
	if (hook_lib_self(&v3, exe, sizeof(exe)) ||
	    hook_lib_open_v2(&v2, v2_path, sizeof(v2_path), exe))
		return 1;
	/* Non-zero ids: a span with a zero span id is no span. */
	span.trace_id[15] = 1;
	span.span_id[7] = 2;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		fprintf(stderr,
			"bench_hook_paced: no BPF run-time statistics (%s): the switch-out "
			"rows read 0\n",
			strerror(errno));
	/* Both agents stay loaded for the whole run, each priced by its own programs' run time. */
	b.l[AGENT_DEFAULT] = agent_open(&b, &lo);
	lo.span_times = 0; /* what --span-stats-max 0 sets */
	b.l[AGENT_TIMES_OFF] = b.l[AGENT_DEFAULT] ? agent_open(&b, &lo) : NULL;
	if (!b.l[AGENT_TIMES_OFF] || reader_start(&b)) {
		ring_buffer__free(b.reader.rb);
		loader_close(b.l[AGENT_TIMES_OFF]);
		loader_close(b.l[AGENT_DEFAULT]);
		return 1;
	}
	if (print_exit_walks(&b, &span, AGENT_DEFAULT, read_on) ||
	    print_exit_walks(&b, &span, AGENT_TIMES_OFF, read_off))
		fprintf(stderr, "bench_hook_paced: attach for the ring read alone: %s\n",
			strerror(errno));
	else
		print_exit_walk_records(read_on, read_off);
	if (print_uprobe_walks(&b, &span))
		fprintf(stderr, "bench_hook_paced: attach for the read at a uprobe entry: %s\n",
			strerror(errno));
	for (; paces < PACE__COUNT && !err && !walk_only; paces++) {
		uint64_t drops[SPANPROF_DROP__COUNT] = { 0 }, spans[PH__COUNT] = { 0 };
		unsigned long long records[PH__COUNT] = { 0 };
		int foreign = 0, ret = 0;

		for (int r = 0; r < rounds && ret >= 0; r++) {
			ret = run_round(&b, &span, paces, &f[paces][r], drops, records, spans);
			foreign += ret > 0;
		}
		if (ret < 0) {
			err = 1;
			break;
		}
		print_pace(paces, f[paces], rounds, drops, records, spans);
		if (foreign)
			printf("    ... %d of %d rounds had another agent's uprobe on the hooks: its "
			       "entries are in the call rows, and the no-agent rows are its\n",
			       foreign, rounds);
	}
	print_budget_ceiling(f, rounds, paces, read_on, read_off);
	reader_stop(&b);
	ring_buffer__free(b.reader.rb);
	loader_close(b.l[AGENT_TIMES_OFF]);
	loader_close(b.l[AGENT_DEFAULT]);
	if (stats_fd >= 0)
		close(stats_fd);
	return err ? 1 : 0;
}
