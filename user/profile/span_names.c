// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Span name ids -> names: a bounded direct-mapped cache in front of the BPF span_names map. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <linux/types.h>

#include "profile/span_names.h"
#include "spanprof_abi.h"
#include "util/text_clean.h"

struct span_slot {
	uint64_t id; /* 0: empty */
	char name[SPANPROF_ABI_SPAN_NAME_MAX + 1];
};

struct span_names {
	size_t mask;
	struct span_slot *slots;
	struct span_names_stats stats;
};

struct span_names *span_names_new(size_t slots)
{
	struct span_names *sn = calloc(1, sizeof(*sn));
	size_t n = 1;

	if (!sn)
		return NULL;
	while (n < slots && n < (1u << 20))
		n <<= 1;
	sn->mask = n - 1;
	sn->slots = calloc(n, sizeof(*sn->slots));
	if (!sn->slots) {
		free(sn);
		errno = ENOMEM;
		return NULL;
	}
	return sn;
}

void span_names_free(struct span_names *sn)
{
	if (!sn)
		return;
	free(sn->slots);
	free(sn);
}

/* text_clean() on each SPANPROF_TCTX_SEP-separated piece of s, keeping the separators (a
 * cleaned piece may be shorter: the rest moves up behind it). */
static void clean_pieces(char *s)
{
	size_t len;
	char *sep;

	for (;;) {
		sep = strchr(s, SPANPROF_TCTX_SEP);
		if (sep)
			*sep = '\0';
		text_clean(s);
		if (!sep)
			return;
		len = strlen(s);
		memmove(s + len + 1, sep + 1, strlen(sep + 1) + 1);
		s[len] = SPANPROF_TCTX_SEP;
		s += len + 1;
	}
}

const char *span_names_get(struct span_names *sn, int map_fd, uint64_t id)
{
	/* The id is a hash already: its low bits pick the slot. */
	struct span_slot *slot = &sn->slots[id & sn->mask];
	struct span_name value;

	if (!id)
		return "";
	if (slot->id == id)
		return slot->name;
	sn->stats.map_reads++;
	if (map_fd < 0 || bpf_map_lookup_elem(map_fd, &id, &value)) {
		sn->stats.lost++;
		return NULL;
	}
	memcpy(slot->name, value.name, sizeof(value.name));
	slot->name[sizeof(value.name)] = '\0';
	/* Where a span name enters the agent: cleaned once for every output, piece by piece, so
	 * that the separators of a thread context's "<name>\x1f<value>..." string stay. */
	clean_pieces(slot->name);
	slot->id = id;
	return slot->name;
}

void span_names_get_stats(const struct span_names *sn, struct span_names_stats *out)
{
	*out = sn->stats;
}
