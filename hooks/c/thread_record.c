// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Each thread's span as an OpenTelemetry thread context record: the exported TLS pointer
 * otel_thread_ctx_v1 points at the record at the start of the thread's area (struct
 * spanprof_thread_area), rewritten at every spanprof_span_set(). The local root's name and id
 * travel as attributes (keys in thread_record.h), announced in the process context. While an
 * agent is attached, every span change is also queued with its time and its name's id in the
 * area's ring, and the call asks the caller to enter the uprobe only to register the area, with
 * a root name the thread has not sent since (so the agent learns its text), every
 * SPANPROF_RING_TRAP_EVERY changes, or a second after the last entry (hook ABI version 3). Part
 * of libspanprof. */
#include <fcntl.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "spanprof_abi.h"
#include "thread_record.h"

#define SPANPROF_EXPORT __attribute__((visibility("default")))

#define ROOT_HEX 16
#define NAME_MAX_LEN (SPANPROF_SPAN_NAME_MAX - 1)
/* Attributes: the name {key, len, <= 255 bytes}, then the root id {key, len, 16 hex digits}. */
#define RECORD_ATTRS_MAX (2 + NAME_MAX_LEN + 2 + ROOT_HEX)

/* The record as OTEP 4947 lays it out: packed, 2-byte aligned, 303 bytes at most. */
struct thread_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs[RECORD_ATTRS_MAX];
} __attribute__((packed, aligned(8)));

_Static_assert(__builtin_offsetof(struct thread_record, valid) == 24, "OTEP record layout");
_Static_assert(__builtin_offsetof(struct thread_record, attrs) == 28, "OTEP record layout");
_Static_assert(sizeof(struct thread_record) <= SPANPROF_AREA_RECORD_SIZE, "record fits its area");

/* What the uprobe reads when the hook enters it: struct spanprof_span, then the area. */
struct span_v3 {
	struct spanprof_span span;
	uint64_t area;
	uint64_t ring_from;
	uint64_t slot;
	uint64_t clock_tsc; /* 0: the ring holds CLOCK_MONOTONIC ns; else a counter reading */
	uint64_t clock_ns; /* the CLOCK_MONOTONIC time read beside clock_tsc */
};

_Static_assert(__builtin_offsetof(struct span_v3, area) == SPANPROF_ABI_V3_AREA_OFFSET, "ABI v3");
_Static_assert(__builtin_offsetof(struct span_v3, ring_from) == SPANPROF_ABI_V3_RING_FROM_OFFSET,
	       "ABI v3");
_Static_assert(__builtin_offsetof(struct span_v3, slot) == SPANPROF_ABI_V3_SLOT_OFFSET, "ABI v3");
_Static_assert(__builtin_offsetof(struct span_v3, clock_tsc) == SPANPROF_ABI_V3_CLOCK_TSC_OFFSET,
	       "ABI v3");
_Static_assert(__builtin_offsetof(struct span_v3, clock_ns) == SPANPROF_ABI_V3_CLOCK_NS_OFFSET,
	       "ABI v3");
_Static_assert(sizeof(struct span_v3) == SPANPROF_ABI_V3_SIZE, "ABI v3");

/* Root names a thread remembers having sent to the agent: a service's threads switch between a
 * few routes. A thread with more re-sends the oldest when it comes back (one uprobe entry). */
#define SENT_NAMES 32

/* Everything a thread keeps, in one TLS block. What every call reads or writes comes first, so
 * that it shares the first cache line with the record's ids and valid flag: a call that finds
 * its data cold (the thread slept, or another process ran on its CPU) misses on as few lines
 * and pages as it can. What only uprobe entries use comes after the ring. */
struct thread_state {
	uint8_t busy; /* a call is running on this thread */
	uint8_t sent_next; /* the sent_names slot the next new name takes (round robin) */
	uint16_t sem; /* the semaphore's value at the last entry; 0: not registered */
	uint16_t name_len; /* of the name attribute at attrs[2]; 0: none */
	uint16_t _pad;
	uint64_t trap_head; /* area.head at the last uprobe entry */
	uint64_t trap_time; /* ring time of the change queued at the last entry that queued one */
	uint64_t name_id; /* FNV-1a 64 of the name attribute's bytes; 0: none */
	struct spanprof_thread_area area;
	struct span_v3 trap; /* the argument of the last uprobe entry */
	/* Names this thread entered the uprobe with since the agent last changed or its last entry
	 * for age (see set_span): a switch back to one of them needs no entry. */
	uint64_t sent_names[SENT_NAMES];
};

_Static_assert(__builtin_offsetof(struct thread_state, area) == 32,
	       "the record's ids and valid flag share the first cache line with the hot fields");

const char *const thread_record_keys[2] = {
	[THREAD_RECORD_KEY_ROOT] = "spanprof.local_root_span_id",
	[THREAD_RECORD_KEY_NAME] = "spanprof.span_name",
};

/* Readers find it in .dynsym; NULL until the thread first sets a span. */
SPANPROF_EXPORT __thread struct thread_record *otel_thread_ctx_v1;

static __thread struct thread_state state __attribute__((aligned(64)));

/* Set once the process context announces the key map (reset in a forked child, which does not
 * inherit the mapping). */
static int announced;
/* Set once, at load: the ring's times are time stamp counter readings (see ring_clock_init). */
static int ring_tsc;

#define barrier() __asm__ __volatile__("" ::: "memory")

/* A change SPANPROF_RING_TRAP_AGE after the last uprobe entry enters it again: an agent that
 * attached while the semaphore went 1, 0, 1 between two calls of this thread (the value alone
 * does not show it) learns of the thread's area within this time of its next change. It also
 * bounds how long the counter-to-ns pair the uprobe entry passes is extrapolated. */

#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV64_PRIME 0x100000001b3ull

/* A name's id, as the agent computes it for the text the uprobe entry carries: FNV-1a 64 of its
 * bytes, 0 for an empty name and never 0 otherwise. */
static uint64_t name_id_of(const char *name, size_t len)
{
	uint64_t h = FNV64_OFFSET;

	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)name[i];
		h *= FNV64_PRIME;
	}
	return h ? h : 1;
}

static int name_sent(const struct thread_state *t, uint64_t id)
{
	if (!id)
		return 1;
	for (int i = 0; i < SENT_NAMES; i++)
		if (t->sent_names[i] == id)
			return 1;
	return 0;
}

static void hex8(uint8_t *out, const uint8_t id[8])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 8; i++) {
		out[2 * i] = (uint8_t)digits[id[i] >> 4];
		out[2 * i + 1] = (uint8_t)digits[id[i] & 15];
	}
}

static int zero8(const uint8_t id[8])
{
	uint64_t v;

	memcpy(&v, id, sizeof(v));
	return !v;
}

static void child_after_fork(void)
{
	process_ctx_after_fork();
	announced = 0;
	/* The child's one thread is a new task: the agent has no area registered for it. */
	state.sem = 0;
}

/* The ring is stamped with the time stamp counter (a few ns a read, where the vDSO's
 * clock_gettime costs tens) only where it converts to CLOCK_MONOTONIC by a fixed rate: x86-64,
 * the CPU says the counter is invariant (same rate in every power state), and the kernel keeps
 * it as its clocksource (it checked the CPUs agree and did not find it unstable). */
static int ring_clock_is_tsc(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;
	char name[8] = { 0 };
	ssize_t n;
	int fd;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007 ||
	    !__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return 0;
	fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, name, sizeof(name) - 1);
	close(fd);
	return n == 4 && !memcmp(name, "tsc\n", 4);
#else
	return 0;
#endif
}

__attribute__((constructor)) static void thread_record_init(void)
{
	/* The process context mapping is not inherited: a child announces its own. */
	pthread_atfork(NULL, NULL, child_after_fork);
	ring_tsc = ring_clock_is_tsc();
}

void thread_record_use_tsc(int on)
{
	ring_tsc = on && ring_clock_is_tsc();
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The time of a change, in the ring's clock. */
static inline uint64_t ring_time(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(ring_tsc, 1))
		return __rdtsc();
#endif
	return mono_ns();
}

/* A clock pair is taken again when its two counter readings lie further apart than this: the
 * thread was preempted or interrupted between them, and the midpoint could be off from the
 * CLOCK_MONOTONIC reading by up to half the gap (a vDSO clock_gettime takes well under 1,000
 * ticks; 4,096 ticks is 1.6 us at 2.6 GHz, so a kept pair is off by 0.8 us at most there). */
#define PAIR_MAX_TICKS 4096
#define PAIR_TRIES 4

/* For the uprobe entry: a counter reading and the CLOCK_MONOTONIC time beside it (the
 * counter's midpoint around the clock read), or zeros when the ring holds ns. Of up to
 * PAIR_TRIES readings, the first whose counter readings are close is kept, else the closest:
 * every change up to the next entry is converted from this pair, and a pair read across a
 * preemption would move them all by half of it (a span's end before its last time on the CPU,
 * its CPU time lost). */
static void ring_clock_pair(uint64_t *tsc, uint64_t *ns)
{
	*tsc = *ns = 0;
#if defined(__x86_64__)
	if (ring_tsc) {
		uint64_t gap = UINT64_MAX;

		for (int i = 0; i < PAIR_TRIES && gap > PAIR_MAX_TICKS; i++) {
			uint64_t t0 = __rdtsc(), n = mono_ns(), t1;

#ifdef SPANPROF_HOOK_TEST_PREEMPTED
			/* Test builds only: the first reading of every pair is split by a switch. */
			if (!i)
				nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
#endif
			t1 = __rdtsc();
			if (t1 - t0 < gap) {
				gap = t1 - t0;
				*tsc = t0 + gap / 2;
				*ns = n;
			}
		}
	}
#endif
}

/* Not spinning: a signal handler's call may have interrupted the thread that holds the process
 * context's lock. Busy, it tries again at a later call. */
static __attribute__((noinline, cold)) void announce(void)
{
	if (!process_ctx_announce())
		__atomic_store_n(&announced, 1, __ATOMIC_RELAXED);
}

/* Writes span into the record under the valid protocol. Returns 1 when the name changed. */
static int write_record(struct thread_state *t, const struct spanprof_span *span)
{
	struct thread_record *r = (struct thread_record *)t->area.record;
	/* A program built against the version 1 header passes a 64-byte name. */
	size_t len = strnlen(span->name, span->abi_version == SPANPROF_ABI_VERSION_V1 ?
						 SPANPROF_ABI_SPAN_NAME_MAX_V1 - 1 :
						 NAME_MAX_LEN);
	uint8_t *a = r->attrs;
	int renamed = 0;

	/* Readers only read while this thread is interrupted or switched out: compiler barriers
	 * order the stores as seen from this thread. */
	r->valid = 0;
	barrier();
	memcpy(r->trace_id, span->trace_id, sizeof(r->trace_id));
	memcpy(r->span_id, span->span_id, sizeof(r->span_id));
	r->trace_flags = 1;
	if (len != t->name_len || memcmp(a + 2, span->name, len)) {
		/* Integrations re-set the same root name at every child span: copied only when it
		 * changes. */
		a[0] = THREAD_RECORD_KEY_NAME;
		a[1] = (uint8_t)len;
		memcpy(a + 2, span->name, len);
		t->name_len = (uint16_t)len;
		t->name_id = name_id_of(span->name, len);
		renamed = 1;
	}
	if (len)
		a += 2 + len;
	if (!zero8(span->root_span_id)) {
		a[0] = THREAD_RECORD_KEY_ROOT;
		a[1] = ROOT_HEX;
		hex8(a + 2, span->root_span_id);
		a += 2 + ROOT_HEX;
	}
	r->attrs_data_size = (uint16_t)(a - r->attrs);
	if (__builtin_expect(!otel_thread_ctx_v1, 0))
		otel_thread_ctx_v1 = r;
	barrier();
	r->valid = 1;
	return renamed;
}

/* Queues the change to span (NULL: none) under the name name_id, unless unchanged: it is the
 * span and name queued last. Returns the index of the entry queued, or head when none was. */
static uint64_t queue_change(struct spanprof_thread_area *area, const struct spanprof_span *span,
			     uint64_t name_id, int unchanged)
{
	static const uint8_t none[24];
	const uint8_t *ids = span ? span->trace_id : none;
	uint64_t h = area->head;
	struct spanprof_ring_entry *e = &area->ring[h & SPANPROF_RING_MASK];

	if (unchanged)
		return h;
	e->time = ring_time();
	/* trace_id and span_id are adjacent in both structs. */
	memcpy(e->trace_id, ids, 24);
	e->name_id = span ? name_id : 0;
	barrier();
	area->head = h + 1;
	return h;
}

static __attribute__((noinline)) const void *trap_arg(struct thread_state *t,
						      const struct spanprof_span *span,
						      unsigned short sem, uint64_t from)
{
	memset(&t->trap.span, 0, sizeof(t->trap.span));
	if (span)
		memcpy(&t->trap.span, span, SPANPROF_ABI_SPAN_NAME_OFFSET);
	/* The thread's root name, whatever this call set: a clear leaves the record's attributes
	 * alone, and a trap that carried no name would rename the thread's segments to none. */
	memcpy(t->trap.span.name, ((const struct thread_record *)t->area.record)->attrs + 2,
	       t->name_len);
	t->trap.span.abi_version = SPANPROF_ABI_VERSION_V3;
	t->trap.area = (uint64_t)(uintptr_t)&t->area;
	t->trap.ring_from = from;
	t->trap.slot = (uint64_t)(uintptr_t)&otel_thread_ctx_v1;
	ring_clock_pair(&t->trap.clock_tsc, &t->trap.clock_ns);
	t->trap_head = t->area.head;
	if (t->area.head != from)
		t->trap_time = t->area.ring[from & SPANPROF_RING_MASK].time;
	t->sem = sem;
	return &t->trap;
}

static inline __attribute__((always_inline)) const void *
set_span(struct thread_state *t, const struct spanprof_span *span, unsigned short sem)
{
	const struct thread_record *r = (const struct thread_record *)t->area.record;
	uint64_t from;
	int renamed = 0, new_name, unchanged;

	if (__builtin_expect(!__atomic_load_n(&announced, __ATOMIC_RELAXED), 0))
		announce();
	/* Whether the ring's last entry already holds this span: while the same agent listens every
	 * change of the record is queued, so the record, which this call reads anyway, says what
	 * that entry holds (its name is checked below). The entry itself is not read: it may be on
	 * a cache line this call would not touch otherwise. */
	unchanged = sem && t->sem == sem && t->area.head &&
		    (span ? r->valid && !memcmp(r->trace_id, span->trace_id, 24) : !r->valid);
	if (span) {
		renamed = write_record(t, span);
	} else {
		/* Left as invalid: the thread is in no span. */
		((struct thread_record *)t->area.record)->valid = 0;
		barrier();
	}
	if (!sem) {
		t->sem = 0; /* the next agent registers the area anew */
		return NULL;
	}
	/* A new agent starts from this change: it must see the thread's span (unchanged is 0). */
	from = queue_change(&t->area, span, t->name_id, unchanged && !renamed);
	new_name = renamed && !name_sent(t, t->name_id);
#ifdef SPANPROF_HOOK_TEST_PREEMPTED
	/* Test builds only: every new root name enters, so that every span start of a workload
	 * taking turns between names goes through the preempted entry. */
	new_name = renamed;
#endif
#ifdef SPANPROF_HOOK_TEST_NO_RING_TRAP
	/* Test builds only: no entry every 256 changes nor for age, as when each of those entries
	 * fails, so that a thread's ring is read only at its switch-outs, its registration and its
	 * new names, and overflows between two switch-outs. */
	if (t->sem == sem && !new_name)
		return NULL;
#endif
	if (__builtin_expect(t->sem == sem && !new_name &&
				     t->area.head - t->trap_head < SPANPROF_RING_TRAP_EVERY &&
				     (t->area.head == from ||
				      t->area.ring[from & SPANPROF_RING_MASK].time - t->trap_time <
					      SPANPROF_RING_TRAP_AGE),
			     1))
		return NULL;
	/* The agent may have changed (the semaphore's value, or an entry for age: the value can
	 * go 1, 0, 1 unseen) and not know the names sent before: they are sent again, once each,
	 * when next used. */
	if (!new_name && (t->sem != sem || t->area.head - t->trap_head < SPANPROF_RING_TRAP_EVERY))
		memset(t->sent_names, 0, sizeof(t->sent_names));
	if (t->name_id && !name_sent(t, t->name_id)) {
		t->sent_names[t->sent_next] = t->name_id;
		t->sent_next = (uint8_t)((t->sent_next + 1) % SENT_NAMES);
	}
	return trap_arg(t, span, sem, from);
}

const void *thread_record_set(const struct spanprof_span *span, unsigned short sem)
{
	struct thread_state *t = &state;
	const void *arg;

	/* The compiler would otherwise compute the thread's address of state again at each use:
	 * in a shared library that is a TLS descriptor call each (-mtls-dialect=gnu2), and, when the
	 * library was dlopen'ed with its TLS block outside static TLS, a lookup in the thread's DTV
	 * each time. Hidden from it, the address is computed once per call and kept. */
	__asm__("" : "+r"(t));

	if (span && span->abi_version != SPANPROF_ABI_VERSION &&
	    span->abi_version != SPANPROF_ABI_VERSION_V1)
		return NULL; /* a version this library does not know: ignored, as agents do */
	/* A call from a signal handler that interrupted a call on this thread would tear the
	 * record and move the ring's head back under the interrupted call: it is dropped and
	 * counted. A handler that sets a span restores the one it interrupted before it returns,
	 * so the record is right again when the handler is done. */
	if (__builtin_expect(t->busy, 0)) {
		t->area.nested++;
		return NULL;
	}
	t->busy = 1;
	barrier();
	arg = set_span(t, span, sem);
	barrier();
	t->busy = 0;
	return arg;
}
