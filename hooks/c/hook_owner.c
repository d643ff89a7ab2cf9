// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Two copies of the hook in one process (an app's libspanprof.so and a plugin or extension that
 * links libspanprof.a, or two vendored libspanprof.so): each copy has its own per-thread state
 * (record, ring, semaphore), so a thread that sets spans through both would publish two records
 * and queue its changes in two rings, while the agent follows one area per thread. Every copy
 * built from this source sends its calls to one owner instead: the first object in the dynamic
 * linker's load order that holds a copy, known by its owner note (hook_owner.h) or, for a
 * library built before the note, by the hook's exported functions. Load order is the same for
 * every copy and an object loaded earlier stays (it is pinned here), so all copies agree,
 * whichever loads last, and an older library loaded first is an owner like any other. The
 * search reads each loaded object's notes and dynamic symbol table in memory
 * (dl_iterate_phdr), once per copy, at load.
 * Part of libspanprof. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hook_owner.h"

/* An object's dynamic symbols, as the dynamic linker left them in memory. */
struct dynsyms {
	const ElfW(Sym) * symtab;
	const char *strtab;
	const uint32_t *gnu_hash; /* DT_GNU_HASH, else NULL */
	const uint32_t *hash; /* DT_HASH, else NULL */
};

struct owner_search {
	const void *self; /* code of the copy searching */
	unsigned int index; /* objects visited so far */
	int found, is_self, is_main;
	uintptr_t span_set, active, publish;
	char name[PATH_MAX]; /* the owner's name, to pin it */
};

/* glibc relocates the dynamic section's addresses in place, musl leaves them as linked: a value
 * below the load bias is one still to relocate. */
static const void *dyn_addr(ElfW(Addr) ptr, ElfW(Addr) bias)
{
	return (const void *)(ptr < bias ? ptr + bias : ptr);
}

static int dynsyms_init(struct dynsyms *d, const ElfW(Dyn) * dyn, ElfW(Addr) bias)
{
	memset(d, 0, sizeof(*d));
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = dyn_addr(dyn->d_un.d_ptr, bias);
			break;
		case DT_STRTAB:
			d->strtab = dyn_addr(dyn->d_un.d_ptr, bias);
			break;
		case DT_GNU_HASH:
			d->gnu_hash = dyn_addr(dyn->d_un.d_ptr, bias);
			break;
		case DT_HASH:
			d->hash = dyn_addr(dyn->d_un.d_ptr, bias);
			break;
		default:
			break;
		}
	}
	return d->symtab && d->strtab && (d->gnu_hash || d->hash) ? 0 : -1;
}

static int sym_is(const struct dynsyms *d, uint32_t index, const char *name)
{
	return !strcmp(d->strtab + d->symtab[index].st_name, name);
}

static const ElfW(Sym) * gnu_lookup(const struct dynsyms *d, const char *name)
{
	const uint32_t *h = d->gnu_hash, nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
	const uint32_t shift = h[3];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + bloom_words);
	const uint32_t *chain = buckets + nbuckets;
	const unsigned int bits = sizeof(ElfW(Addr)) * 8;
	uint32_t hash = 5381, i;
	ElfW(Addr) word;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		hash = hash * 33 + *p;
	if (!nbuckets || !bloom_words)
		return NULL;
	word = bloom[(hash / bits) % bloom_words];
	if (!((word >> (hash % bits)) & (word >> ((hash >> shift) % bits)) & 1))
		return NULL;
	i = buckets[hash % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];

		if ((h2 | 1) == (hash | 1) && sym_is(d, i, name))
			return &d->symtab[i];
		if (h2 & 1)
			return NULL;
	}
}

static const ElfW(Sym) * sysv_lookup(const struct dynsyms *d, const char *name)
{
	const uint32_t *h = d->hash, nbucket = h[0], nchain = h[1];
	const uint32_t *bucket = h + 2, *chain = bucket + nbucket;
	uint32_t hash = 0, g, steps = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		hash = (hash << 4) + *p;
		g = hash & 0xf0000000u;
		if (g)
			hash ^= g >> 24;
		hash &= ~g;
	}
	if (!nbucket)
		return NULL;
	for (uint32_t i = bucket[hash % nbucket]; i && i < nchain && steps++ < nchain; i = chain[i])
		if (sym_is(d, i, name))
			return &d->symtab[i];
	return NULL;
}

/* The address of the function name the object defines and exports, or 0. */
static uintptr_t defined_function(const struct dynsyms *d, ElfW(Addr) bias, const char *name)
{
	const ElfW(Sym) *sym = d->gnu_hash ? gnu_lookup(d, name) : sysv_lookup(d, name);

	if (!sym || sym->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
	    (ELF64_ST_BIND(sym->st_info) != STB_GLOBAL && ELF64_ST_BIND(sym->st_info) != STB_WEAK))
		return 0;
	return bias + sym->st_value;
}

static int holds(const struct dl_phdr_info *info, const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= start && a - start < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The owner note in one PT_NOTE segment (hook_owner.h): fills s's functions and returns 1. An
 * address outside the object's loaded segments is not taken. */
static int owner_note(struct owner_search *s, const struct dl_phdr_info *info,
		      const ElfW(Phdr) * ph)
{
	const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
	size_t off = 0, size = ph->p_memsz;
	uint32_t nh[3];
	int64_t rel[3];

	while (size - off >= sizeof(nh)) {
		size_t name = off + sizeof(nh), desc, next;

		memcpy(nh, p + off, sizeof(nh));
		desc = name + ((nh[0] + 3u) & ~3u);
		next = desc + ((nh[1] + 3u) & ~3u);
		if (desc > size || next > size || next <= off)
			return 0;
		if (nh[2] == HOOK_OWNER_NOTE_TYPE && nh[0] == sizeof(HOOK_OWNER_NOTE_NAME) &&
		    !memcmp(p + name, HOOK_OWNER_NOTE_NAME, sizeof(HOOK_OWNER_NOTE_NAME)) &&
		    nh[1] >= sizeof(rel)) {
			memcpy(rel, p + desc, sizeof(rel));
			s->span_set = (uintptr_t)(p + desc) + (uintptr_t)rel[0];
			s->active = (uintptr_t)(p + desc) + (uintptr_t)rel[1];
			s->publish = (uintptr_t)(p + desc) + (uintptr_t)rel[2];
			return holds(info, (const void *)s->span_set) &&
			       holds(info, (const void *)s->active) &&
			       holds(info, (const void *)s->publish);
		}
		off = next;
	}
	return 0;
}

/* A copy built before the owner note: its exported functions. Returns 1 when it has both. */
static int exported_hook(struct owner_search *s, const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	struct dynsyms d;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn || dynsyms_init(&d, dyn, info->dlpi_addr))
		return 0;
	s->span_set = defined_function(&d, info->dlpi_addr, "spanprof_span_set");
	s->active = defined_function(&d, info->dlpi_addr, "spanprof_active");
	s->publish = defined_function(&d, info->dlpi_addr, "spanprof_process_context_publish");
	return s->span_set && s->active;
}

/* dl_iterate_phdr visits objects in load order: the first copy of the hook ends the search. */
static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct owner_search *s = data;
	unsigned int index = s->index++;
	int found = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !found; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			found = owner_note(s, info, &info->dlpi_phdr[i]);
	if (!found && !exported_hook(s, info))
		return 0;
	s->found = 1;
	s->is_self = holds(info, s->self);
	s->is_main = index == 0;
	snprintf(s->name, sizeof(s->name), "%s", info->dlpi_name ? info->dlpi_name : "");
	return 1;
}

void hook_owner_find(struct hook_owner *owner, const void *self)
{
	struct owner_search s = { .self = self };

	memset(owner, 0, sizeof(*owner));
	dl_iterate_phdr(visit, &s);
	if (!s.found || s.is_self)
		return;
	/* A library the owner is must outlive this copy: one more reference, never dropped. The
	 * executable is never unloaded. A name that does not open (a path gone or renamed since)
	 * leaves this copy on its own, as without the search. */
	if (!s.is_main && (!s.name[0] || !dlopen(s.name, RTLD_NOW | RTLD_NOLOAD)))
		return;
	owner->span_set = (hook_span_set_fn)s.span_set;
	owner->active = (hook_active_fn)s.active;
	owner->publish = (hook_publish_fn)s.publish;
}

struct hook_owner hook_owner;

/* SPANPROF_HOOK_TEST_BEFORE_OWNER: test builds only, a copy as built before copies looked for
 * their owner (no search, no owner note), as already-built libraries are. */
#ifndef SPANPROF_HOOK_TEST_BEFORE_OWNER
__attribute__((constructor)) static void hook_owner_init(void)
{
	hook_owner_find(&hook_owner, (const void *)hook_owner_init);
}
#endif
