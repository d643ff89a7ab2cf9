// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolizes one sample's stacks into frames whose strings live in the caller's buffer. */
#include <errno.h>
#include <string.h>

#include "symbolize/stack_resolve.h"

/* Fake addresses for marker frames: distinct, so pprof keeps them as distinct locations. */
#define LOST_KERN_ADDR 1
#define LOST_USER_ADDR 2

static const char *keep(struct stack_resolve *r, const char *s)
{
	size_t len;
	char *dst;

	if (!s)
		return NULL;
	len = strlen(s) + 1;
	if (len > sizeof(r->strings) - r->used)
		return "[name dropped: frame string buffer full]";
	dst = r->strings + r->used;
	memcpy(dst, s, len);
	r->used += len;
	return dst;
}

/* Makes the frame's strings independent of the cache. */
static void keep_frame(struct stack_resolve *r, struct sym_frame *f)
{
	int i;

	if (f->has_mapping) {
		f->mapping.path = keep(r, f->mapping.path);
		f->mapping.build_id = keep(r, f->mapping.build_id);
	}
	for (i = 0; i < f->nlines; i++) {
		f->lines[i].function = keep(r, f->lines[i].function);
		f->lines[i].file = keep(r, f->lines[i].file);
	}
}

static void add_marker(struct stack_resolve *r, uint64_t addr, const char *name)
{
	struct sym_frame *f = &r->frames[r->nframes++];

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->nlines = 1;
	f->lines[0].function = name;
}

static void add_stack(struct stack_resolve *r, struct symcache *sc, pid_t pid, const uint64_t *ips,
		      int kernel)
{
	struct sym_frame *f;
	size_t i;

	for (i = 0; i < SPANPROF_MAX_STACK_DEPTH && ips[i]; i++) {
		f = &r->frames[r->nframes++];
		if (kernel) {
			symcache_resolve_kernel(sc, ips[i], f);
		} else {
			symcache_resolve_user(sc, pid, i ? ips[i] - 1 : ips[i], f);
			f->addr = ips[i];
		}
		keep_frame(r, f);
	}
}

void stack_resolve(struct stack_resolve *r, struct symcache *sc, pid_t pid,
		   const uint64_t *kern_ips, int lost_kern, const uint64_t *user_ips, int lost_user)
{
	r->nframes = 0;
	r->used = 0;
	if (lost_kern)
		add_marker(r, LOST_KERN_ADDR, "[kernel stack lost]");
	else if (kern_ips)
		add_stack(r, sc, pid, kern_ips, 1);
	r->user_start = r->nframes;
	if (lost_user)
		add_marker(r, LOST_USER_ADDR, "[user stack lost]");
	else if (user_ips)
		add_stack(r, sc, pid, user_ips, 0);
}

int stack_resolve_insert(struct stack_resolve *r, size_t at, const struct sym_frame *f)
{
	if (r->nframes >= STACK_RESOLVE_MAX_FRAMES || at > r->nframes)
		return -E2BIG;
	memmove(&r->frames[at + 1], &r->frames[at], (r->nframes - at) * sizeof(r->frames[0]));
	r->frames[at] = *f;
	keep_frame(r, &r->frames[at]);
	r->nframes++;
	return 0;
}
