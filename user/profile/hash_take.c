// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* BPF_MAP_LOOKUP_AND_DELETE_BATCH into growing arrays, then a sorted index for lookups. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "profile/hash_take.h"
#include "util/sorted_u64.h"

/* The kernel's ENOTSUPP (524), which batch operations return on maps without them. */
#define ENOTSUPP_ERRNO 524
/* Entries allocated at first; doubled as needed. */
#define HASH_TAKE_FIRST_CAP 64

void hash_take_init(struct hash_take *t, size_t value_size, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	t->value_size = value_size;
	t->max = max;
}

void hash_take_release(struct hash_take *t)
{
	uint64_t truncated = t->truncated;

	free(t->index);
	free(t->keys);
	free(t->values);
	hash_take_init(t, t->value_size, t->max);
	t->truncated = truncated;
}

/* Room for at least `need` entries (need <= max). */
static int grow(struct hash_take *t, uint32_t need)
{
	uint32_t cap = t->cap ? t->cap : HASH_TAKE_FIRST_CAP;
	struct hash_take_entry *index;
	unsigned char *values;
	uint64_t *keys;

	while (cap < need)
		cap = cap > t->max / 2 ? t->max : cap * 2;
	if (cap > t->max)
		cap = t->max;
	if (cap <= t->cap)
		return 0;
	keys = realloc(t->keys, cap * sizeof(*keys));
	if (keys)
		t->keys = keys;
	index = realloc(t->index, cap * sizeof(*index));
	if (index)
		t->index = index;
	values = realloc(t->values, cap * t->value_size);
	if (values)
		t->values = values;
	if (!keys || !index || !values)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const struct hash_take_entry *)a)->key;
	uint64_t y = ((const struct hash_take_entry *)b)->key;

	return x < y ? -1 : x > y;
}

int hash_take_map(struct hash_take *t, int fd)
{
	uint64_t token; /* the kernel's position: a bucket index */
	void *in = NULL;
	uint32_t got, i;
	int err = 0;

	/* The last window needed far less than is held: give the memory back. */
	if (t->cap > HASH_TAKE_FIRST_CAP && (uint64_t)t->n * 4 < t->cap)
		hash_take_release(t);
	t->n = 0;
	t->complete = 0;
	while (t->n < t->max) {
		if (t->n == t->cap && grow(t, t->n + 1)) {
			err = -ENOMEM;
			break;
		}
		got = t->cap - t->n;
		err = bpf_map_lookup_and_delete_batch(fd, in, &token, t->keys + t->n,
						      t->values + (size_t)t->n * t->value_size,
						      &got, NULL);
		/* The count is reported on success and at the map's end; on other errors it may
		 * be the room passed in, untouched. */
		if (err && errno != ENOENT)
			got = 0;
		t->n += got;
		if (!err) {
			in = &token;
			continue;
		}
		err = -errno;
		if (err == -ENOENT) { /* the whole map was read */
			err = 0;
			t->complete = 1;
			break;
		}
		/* A bucket bigger than the room left: grow, and the same call goes on. At max, the
		 * rest stays in the map, as when max is reached below. */
		if (err == -ENOSPC && t->cap < t->max && !grow(t, t->cap + 1))
			continue;
		if (err == -ENOSPC && t->cap == t->max) {
			err = 0;
			t->truncated++;
			break;
		}
		if (!t->n && !in &&
		    (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTSUPP_ERRNO))
			err = -EOPNOTSUPP;
		break;
	}
	/* Full: whatever is left stays in the map for the caller's own clearing. */
	if (t->n == t->max && !t->complete && !err) {
		if (bpf_map_get_next_key(fd, NULL, &token))
			t->complete = 1;
		else
			t->truncated++;
	}
	for (i = 0; i < t->n; i++) {
		t->index[i].key = t->keys[i];
		t->index[i].slot = i;
	}
	if (t->n)
		qsort(t->index, t->n, sizeof(*t->index), cmp_entry);
	return err;
}

const void *hash_take_find(const struct hash_take *t, uint64_t key)
{
	/* Keys are unique: the one entry <= key, if it is key. */
	size_t at = sorted_u64_upper_bound(t->index, t->n, sizeof(*t->index),
					   offsetof(struct hash_take_entry, key), key);

	if (at && t->index[at - 1].key == key)
		return t->values + (size_t)t->index[at - 1].slot * t->value_size;
	return NULL;
}
