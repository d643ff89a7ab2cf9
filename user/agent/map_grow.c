// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A BPF map replaced by a bigger one as it fills (map_grow.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/map_grow.h"
#include "util/log.h"
#include "util/self_memory.h"

static int create_map(const struct map_grow *g, uint32_t max_entries)
{
	int fd = bpf_map_create(g->type, g->name, g->key_size, g->value_size, max_entries, NULL);

	return fd < 0 ? -errno : fd;
}

static int put_in_slot(const struct map_grow *g, int fd)
{
	__u32 zero = 0;

	return bpf_map_update_elem(g->outer_fd, &zero, &fd, BPF_ANY) ? -errno : 0;
}

int map_grow_open(struct map_grow *g, int outer_fd, const char *name, enum bpf_map_type type,
		  uint32_t key_size, uint32_t value_size, uint32_t start, uint32_t limit)
{
	int err;

	memset(g, 0, sizeof(*g));
	g->info = (struct self_memory_file)SELF_MEMORY_FILE_INIT;
	g->outer_fd = outer_fd;
	g->name = name;
	g->type = type;
	g->key_size = key_size;
	g->value_size = value_size;
	g->limit = limit;
	g->max_entries = start < limit ? start : limit;
	g->fd = create_map(g, g->max_entries);
	if (g->fd < 0)
		return log_err(g->fd, "create BPF map %s (%u entries)", name, g->max_entries);
	err = put_in_slot(g, g->fd);
	if (err) {
		close(g->fd);
		g->fd = -1;
		return log_err(err, "put BPF map %s in its slot", name);
	}
	return 0;
}

/* Walks from's keys: counts them (*n) and, with to >= 0, copies each entry that to does not
 * hold yet. key, next and value are scratch of the map's key and value sizes. */
static void walk(const struct map_grow *g, int from, int to, void *key, void *next, void *value,
		 uint32_t *n)
{
	void *prev = NULL;

	*n = 0;
	while (!bpf_map_get_next_key(from, prev, next)) {
		(*n)++;
		if (to >= 0 && !bpf_map_lookup_elem(from, next, value))
			bpf_map_update_elem(to, next, value, BPF_NOEXIST);
		memcpy(key, next, g->key_size);
		prev = key;
	}
}

/* Replaces the map with one of max_entries: entries copied first, then the slot switched (the
 * programs use the new map from then on), then what they wrote to the old one meanwhile copied
 * too. A span change written between an entry's copy and the switch (milliseconds) is lost. */
static int replace(struct map_grow *g, uint32_t max_entries, void *key, void *next, void *value)
{
	int fd = create_map(g, max_entries), err;
	uint32_t n;

	if (fd < 0)
		return fd;
	walk(g, g->fd, fd, key, next, value, &n);
	err = put_in_slot(g, fd);
	if (err) {
		close(fd);
		return err;
	}
	walk(g, g->fd, fd, key, next, value, &n);
	close(g->fd);
	g->fd = fd;
	g->max_entries = max_entries;
	g->grown++;
	return 0;
}

int map_grow_check(struct map_grow *g)
{
	void *buf = malloc(2 * (size_t)g->key_size + g->value_size);
	uint32_t want;
	int err;

	if (!buf)
		return -ENOMEM;
	walk(g, g->fd, -1, buf, (char *)buf + g->key_size, NULL, &g->entries);
	if ((uint64_t)g->entries * 4 <= (uint64_t)g->max_entries * 3) {
		free(buf);
		return 0;
	}
	if (g->max_entries >= g->limit) {
		g->full++;
		if (!g->at_limit_logged)
			log_warn(0,
				 "BPF map %s holds %u of its %u entries, its limit: the least "
				 "recent are evicted (counted in "
				 "spanprof_go_span_map_full_total, logged once)",
				 g->name, g->entries, g->max_entries);
		g->at_limit_logged = 1;
		free(buf);
		return 0;
	}
	want = g->max_entries > g->limit / 2 ? g->limit : 2 * g->max_entries;
	err = replace(g, want, buf, (char *)buf + g->key_size, (char *)buf + 2 * g->key_size);
	free(buf);
	if (err)
		return log_warn(err, "grow BPF map %s from %u to %u entries (it stays as it is)",
				g->name, g->max_entries, want);
	log_info("BPF map %s grown to %u entries (%u in use)", g->name, want, g->entries);
	return 1;
}

int map_grow_memory(struct map_grow *g, uint64_t *bytes)
{
	*bytes = 0;
	return g->fd >= 0 ? self_memory_bpf_map_in(&g->info, g->fd, bytes) : 0;
}

void map_grow_close(struct map_grow *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	self_memory_file_close(&g->info);
}
