// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Merged call tree: nodes in an array, children found through a hash of (parent, name). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "view/flame_tree.h"
#include "view/json_out.h"
#include "view/str_pool.h"

#define NONE UINT32_MAX

struct node {
	uint32_t name, file; /* ids in strs */
	int32_t line;
	uint32_t parent;
	uint32_t first_child, next_sibling, nchildren;
	int64_t cpu_ns, off_cpu_ns;
};

struct flame_tree {
	struct str_pool *strs;
	struct node *nodes;
	size_t n, cap, max;
	uint32_t *slots; /* hash of (parent, name) -> node */
	size_t nslots;
	uint64_t samples, truncated;
};

static uint64_t key_hash(uint32_t parent, uint32_t name)
{
	return ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull >> 20;
}

struct flame_tree *flame_tree_new(size_t max_nodes)
{
	struct flame_tree *ft = calloc(1, sizeof(*ft));
	uint32_t all;

	if (!ft)
		goto out_nomem;
	ft->max = max_nodes ? max_nodes : 1;
	ft->strs = str_pool_new();
	ft->cap = 1024;
	ft->nodes = malloc(ft->cap * sizeof(*ft->nodes));
	ft->nslots = 4096;
	ft->slots = malloc(ft->nslots * sizeof(*ft->slots));
	if (!ft->strs || !ft->nodes || !ft->slots || str_pool_intern(ft->strs, "all", 3, &all)) {
		flame_tree_free(ft);
		goto out_nomem;
	}
	memset(ft->slots, 0xff, ft->nslots * sizeof(*ft->slots));
	ft->nodes[0] = (struct node){ all, all, 0, NONE, NONE, NONE, 0, 0, 0 };
	ft->n = 1;
	return ft;
out_nomem:
	errno = ENOMEM;
	return NULL;
}

void flame_tree_free(struct flame_tree *ft)
{
	if (!ft)
		return;
	str_pool_free(ft->strs);
	free(ft->nodes);
	free(ft->slots);
	free(ft);
}

/* The slot holding (parent, name), or the free slot where it goes. */
static size_t find_slot(const struct flame_tree *ft, uint32_t parent, uint32_t name)
{
	size_t mask = ft->nslots - 1, j;

	for (j = key_hash(parent, name) & mask; ft->slots[j] != NONE; j = (j + 1) & mask)
		if (ft->nodes[ft->slots[j]].name == name &&
		    ft->nodes[ft->slots[j]].parent == parent)
			return j;
	return j;
}

static int grow(struct flame_tree *ft)
{
	size_t i, j, nslots = ft->nslots * 2;
	uint32_t *slots;
	struct node *p;

	if (ft->n == ft->cap) {
		p = realloc(ft->nodes, ft->cap * 2 * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ft->nodes = p;
		ft->cap *= 2;
	}
	if (2 * (ft->n + 1) <= ft->nslots)
		return 0;
	slots = malloc(nslots * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, nslots * sizeof(*slots));
	free(ft->slots);
	ft->slots = slots;
	ft->nslots = nslots;
	for (i = 1; i < ft->n; i++) {
		j = find_slot(ft, ft->nodes[i].parent, ft->nodes[i].name);
		ft->slots[j] = (uint32_t)i;
	}
	return 0;
}

/* The child of parent called by frame fr of p, added when new; NONE past max nodes. */
static int child(struct flame_tree *ft, uint32_t parent, const struct view_profile *p,
		 const struct view_frame *fr, uint32_t *out)
{
	const char *name = fr->name == VIEW_NO_STR ? "?" : view_profile_str(p, fr->name);
	const char *file = view_profile_str(p, fr->file);
	struct node *n;
	uint32_t name_id, file_id;
	size_t j;
	int err;

	err = str_pool_intern(ft->strs, name, strlen(name), &name_id);
	if (err)
		return err;
	j = find_slot(ft, parent, name_id);
	if (ft->slots[j] != NONE) {
		*out = ft->slots[j];
		return 0;
	}
	if (ft->n >= ft->max) {
		*out = NONE;
		return 0;
	}
	err = grow(ft) ?: str_pool_intern(ft->strs, file, strlen(file), &file_id);
	if (err)
		return err;
	j = find_slot(ft, parent, name_id);
	n = &ft->nodes[ft->n];
	*n = (struct node){ name_id, file_id, fr->line, parent, NONE, NONE, 0, 0, 0 };
	n->next_sibling = ft->nodes[parent].first_child;
	ft->nodes[parent].first_child = (uint32_t)ft->n;
	ft->nodes[parent].nchildren++;
	ft->slots[j] = (uint32_t)ft->n;
	*out = (uint32_t)ft->n++;
	return 0;
}

static void add_value(struct node *n, enum view_kind kind, int64_t v)
{
	if (kind == VIEW_KIND_CPU)
		n->cpu_ns += v;
	else
		n->off_cpu_ns += v;
}

int flame_tree_add(struct flame_tree *ft, const struct view_profile *p, const struct view_sample *s)
{
	uint32_t cur = 0, next, i, f;
	const struct view_loc *loc;
	int err;

	ft->samples++;
	add_value(&ft->nodes[0], p->kind, s->value);
	for (i = 0; i < s->n; i++) {
		loc = &p->locs[p->stack[s->first + i]];
		for (f = 0; f < loc->n; f++) {
			err = child(ft, cur, p, &p->frames[loc->first + f], &next);
			if (err)
				return err;
			if (next == NONE) {
				ft->truncated++;
				return 0;
			}
			cur = next;
			add_value(&ft->nodes[cur], p->kind, s->value);
		}
	}
	return 0;
}

static void write_node(const struct flame_tree *ft, FILE *f, uint32_t i, int first)
{
	const struct node *n = &ft->nodes[i];
	uint32_t c;

	fprintf(f, "%s[%u,%u,%d,%lld,%lld,%u]", first ? "" : ",", n->name, n->file, n->line,
		(long long)n->cpu_ns, (long long)n->off_cpu_ns, n->nchildren);
	for (c = n->first_child; c != NONE; c = ft->nodes[c].next_sibling)
		write_node(ft, f, c, 0);
}

void flame_tree_write_json(const struct flame_tree *ft, FILE *f)
{
	size_t i;

	fputs("{\"strings\":[", f);
	for (i = 0; i < str_pool_count(ft->strs); i++) {
		if (i)
			putc(',', f);
		json_out_str(f, str_pool_get(ft->strs, (uint32_t)i));
	}
	fputs("],\"nodes\":[", f);
	write_node(ft, f, 0, 1);
	fprintf(f, "],\"cpu_ns\":%lld,\"off_cpu_ns\":%lld,\"samples\":%llu,\"truncated\":%llu}",
		(long long)ft->nodes[0].cpu_ns, (long long)ft->nodes[0].off_cpu_ns,
		(unsigned long long)ft->samples, (unsigned long long)ft->truncated);
}
