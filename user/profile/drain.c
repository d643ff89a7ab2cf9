// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Window draining: BPF count and stack maps -> plain sample records, then the maps emptied. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "profile/drain.h"
#include "profile/hash_take.h"
#include "profile/span_names.h"
#include "util/log.h"

/* The kernel's ENOTSUPP (524), which batch operations return on maps without them; not in
 * userspace errno.h. */
#define ENOTSUPP_ERRNO 524

/* Span names cached in user space (each slot ~264 bytes); span_names holds 4096 in the kernel. */
#define DRAIN_NAME_CACHE 1024

struct drain {
	uint32_t max_keys, max_hashes;
	struct sample_key *keys; /* scratch for one drain, max_keys entries */
	__u64 *counts; /* their counts, read with them */
	struct span_names *names; /* span name ids -> names */
	__u64 *hashes; /* the stack keys the window's samples named (two per key at most), then
			* scratch for clearing the rest; 2 * max_keys entries */
	__u64 *interp_hashes; /* scratch: the interp_stacks keys the window's samples named */
	/* how many of hashes and interp_hashes the drain filled */
	uint32_t nhashes, ninterp_hashes;
	uint64_t kern_ips[SPANPROF_MAX_STACK_DEPTH], user_ips[SPANPROF_MAX_STACK_DEPTH];
	struct spanprof_user_stack stack; /* scratch for one stack read by lookup */
	struct drain_stats stats;
	int interp_fd; /* -1: no interp_stacks map */
	struct interp_stack interp;
	/* The window's stacks and interpreter stacks, taken whole before the samples are read;
	 * *_taken: the take read the map to its end (else lookups fall back to one syscall each,
	 * and the map is cleared key by key after). A shared stack map is not taken: it is read
	 * by lookup and left as it is. */
	struct hash_take stack_take, interp_take;
	int stacks_taken, interp_taken;
	drain_keys_fn keys_fn; /* NULL: none */
	void *keys_ctx;
};

struct drain *drain_new(uint32_t max_keys, uint32_t max_stacks)
{
	struct drain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->max_keys = max_keys;
	d->interp_fd = -1;
	d->max_hashes = 2 * max_keys; /* a kernel and a user stack per key */
	hash_take_init(&d->stack_take, sizeof(struct spanprof_user_stack), max_stacks);
	/* The samples of a window name at most max_keys interpreter stacks. */
	hash_take_init(&d->interp_take, sizeof(struct interp_stack), max_keys);
	d->keys = calloc(max_keys, sizeof(*d->keys));
	d->names = span_names_new(DRAIN_NAME_CACHE);
	d->hashes = calloc(d->max_hashes, sizeof(*d->hashes));
	d->counts = calloc(max_keys, sizeof(*d->counts));
	d->interp_hashes = calloc(max_keys, sizeof(*d->interp_hashes));
	if (!d->keys || !d->names || !d->hashes || !d->counts || !d->interp_hashes) {
		span_names_free(d->names);
		free(d->interp_hashes);
		free(d->counts);
		free(d->keys);
		free(d->hashes);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void drain_free(struct drain *d)
{
	if (!d)
		return;
	free(d->keys);
	free(d->counts);
	free(d->interp_hashes);
	span_names_free(d->names);
	free(d->hashes);
	hash_take_release(&d->stack_take);
	hash_take_release(&d->interp_take);
	free(d);
}

/* The stack stored under hash, copied into ips (zero after the last frame); NULL when the map
 * does not hold it (the BPF side could not store it) or it could not be read. */
static const uint64_t *read_stack(struct drain *d, int fd, __u64 hash, uint64_t *ips)
{
	const struct spanprof_user_stack *st = hash_take_find(&d->stack_take, hash);
	__u32 n;

	if (!st && !d->stacks_taken && fd >= 0) {
		if (!bpf_map_lookup_elem(fd, &hash, &d->stack))
			st = &d->stack;
		else if (errno != ENOENT)
			d->stats.map_errors++;
	}
	if (!st)
		return NULL;
	n = st->nframes < SPANPROF_MAX_STACK_DEPTH ? st->nframes : SPANPROF_MAX_STACK_DEPTH;
	memcpy(ips, st->ips, n * sizeof(*ips));
	memset(ips + n, 0, (SPANPROF_MAX_STACK_DEPTH - n) * sizeof(*ips));
	return ips;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Deletes the n hashes (sorted and made unique here) from a stack hash map, in kernel batches:
 * one syscall for all of them instead of a get-next-key and a delete each. A batch stops at a key
 * it cannot delete; that key is skipped. Without batch support (or on any other error) nothing
 * is lost: the walk in clear_*_stacks that follows deletes whatever is left. */
static void delete_hashes(int fd, __u64 *hashes, uint32_t n)
{
	uint32_t i, u = 0, done, count;

	if (fd < 0 || !n)
		return;
	qsort(hashes, n, sizeof(*hashes), cmp_u64);
	for (i = 0; i < n; i++)
		if (!u || hashes[u - 1] != hashes[i])
			hashes[u++] = hashes[i];
	for (done = 0; done < u; done += count + 1) {
		count = u - done;
		if (!bpf_map_delete_batch(fd, hashes + done, &count, NULL))
			break;
		if (errno != ENOENT)
			break;
	}
}

/* Empties a hash of stacks: keys first (deleting while walking would restart the walk), at most
 * max_hashes per pass, as many passes as it takes. */
static void clear_stacks(struct drain *d, int fd)
{
	uint32_t n, i;
	__u64 *prev;

	if (fd < 0)
		return;
	do {
		n = 0;
		prev = NULL;
		while (n < d->max_hashes && !bpf_map_get_next_key(fd, prev, &d->hashes[n])) {
			prev = &d->hashes[n];
			n++;
		}
		for (i = 0; i < n; i++)
			bpf_map_delete_elem(fd, &d->hashes[i]);
	} while (n == d->max_hashes);
}

void drain_set_interp_stacks(struct drain *d, int interp_stacks_fd)
{
	d->interp_fd = interp_stacks_fd;
}

void drain_set_keys_fn(struct drain *d, drain_keys_fn fn, void *ctx)
{
	d->keys_fn = fn;
	d->keys_ctx = ctx;
}

/* The sample's Python or Ruby frames; NULL when it has none or they cannot be read. */
static const struct interp_stack *read_interp(struct drain *d, const struct sample_key *key)
{
	const struct interp_stack *taken;

	if (!key->interp_stack_hash || d->interp_fd < 0)
		return NULL;
	taken = hash_take_find(&d->interp_take, key->interp_stack_hash);
	if (taken)
		d->interp = *taken;
	else if (d->interp_taken ||
		 bpf_map_lookup_elem(d->interp_fd, &key->interp_stack_hash, &d->interp)) {
		d->stats.map_errors++;
		return NULL;
	}
	if (d->interp.nframes > SPANPROF_INTERP_MAX_FRAMES)
		d->interp.nframes = SPANPROF_INTERP_MAX_FRAMES;
	return &d->interp;
}

static void clear_interp_stacks(int fd)
{
	__u64 next;

	/* A hash map: always delete the first key, never continue from a deleted one. */
	while (!bpf_map_get_next_key(fd, NULL, &next))
		if (bpf_map_delete_elem(fd, &next))
			break;
}

/* Key by key: a kernel without batch operations on hash maps. Sets *n to the number read;
 * returns 0 or the -errno of a count that could not be read (the other keys are kept). */
static int take_counts_by_key(struct drain *d, int fd, uint32_t *n_read)
{
	struct sample_key *prev = NULL;
	uint32_t n = 0, i, kept = 0;
	int read, err = 0;

	while (n < d->max_keys && !bpf_map_get_next_key(fd, prev, &d->keys[n])) {
		prev = &d->keys[n];
		n++;
	}
	for (i = 0; i < n; i++) {
		read = !bpf_map_lookup_elem(fd, &d->keys[i], &d->counts[kept]);
		if (!read) {
			err = log_warn(-errno, "read sample count (pid %u)", d->keys[i].pid);
			d->stats.map_errors++;
		}
		bpf_map_delete_elem(fd, &d->keys[i]); /* before the key is moved down over */
		if (read)
			d->keys[kept++] = d->keys[i];
	}
	*n_read = kept;
	return err;
}

/* Reads and deletes up to max_keys counts of the window into keys and counts, a batch per
 * syscall (key by key were three syscalls per sample key: the drain's main cost). A bucket
 * too big for the room left (-ENOSPC) stays for the next drain. Sets *n_read to the number
 * read; returns 0 or the -errno of a failed read. */
static int take_counts(struct drain *d, int fd, uint32_t *n_read)
{
	struct sample_key token; /* the kernel's position: a bucket index for a hash map */
	uint32_t n = 0, got;
	void *in = NULL;
	int err = 0;

	while (n < d->max_keys) {
		got = d->max_keys - n;
		err = bpf_map_lookup_and_delete_batch(fd, in, &token, d->keys + n, d->counts + n,
						      &got, NULL);
		n += got;
		if (!err) {
			in = &token;
			continue;
		}
		err = 0;
		if (errno == ENOENT) /* the whole map was read */
			break;
		if (!n && (errno == EINVAL || errno == EOPNOTSUPP || errno == ENOTSUPP_ERRNO))
			return take_counts_by_key(d, fd, n_read);
		if (errno != ENOSPC) {
			err = log_warn(-errno, "read the window's sample counts");
			d->stats.map_errors++;
		}
		break;
	}
	*n_read = n;
	return err;
}

/* Takes a window's whole hash of stacks; returns whether it read the map to its end. */
static int take_stacks(struct hash_take *t, int fd, const char *what)
{
	int err;

	if (fd < 0) {
		t->n = 0;
		return 0;
	}
	err = hash_take_map(t, fd);
	if (err && err != -EOPNOTSUPP)
		log_warn(err, "read the window's %sstacks (%u read before the error)", what, t->n);
	return !err && t->complete;
}

/* Notes a stack hash the window's samples named, to delete it after when the take was partial. */
static void note_hash(struct drain *d, __u64 hash)
{
	if (hash && d->nhashes < d->max_hashes)
		d->hashes[d->nhashes++] = hash;
}

/* Reads and deletes every count of the window; the stack maps are left to the caller. shared:
 * stacks_fd is read by lookup, not taken. */
static int drain_counts(struct drain *d, int counts_fd, int stacks_fd, int shared, int names_fd,
			drain_sample_fn fn, void *ctx)
{
	const struct sample_key *key;
	struct sample s;
	uint32_t n, i;
	int err = take_counts(d, counts_fd, &n);

	d->nhashes = d->ninterp_hashes = 0; /* n <= max_keys: room for two hashes per key */
	d->stacks_taken = take_stacks(&d->stack_take, shared ? -1 : stacks_fd, "");
	d->interp_taken = take_stacks(&d->interp_take, d->interp_fd, "interpreter ");
	d->stats.last_keys = n;
	d->stats.last_stacks = d->stack_take.n;
	d->stats.last_interp_stacks = d->interp_take.n;
	if (d->keys_fn && n)
		d->keys_fn(d->keys_ctx, d->keys, n);
	for (i = 0; i < n; i++) {
		key = &d->keys[i];
		s.count = d->counts[i];
		s.key = key;
		/* A hash of 0: there is no such stack (a kernel thread has no user stack). */
		s.kern_ips = key->kern_stack_hash ?
				     read_stack(d, stacks_fd, key->kern_stack_hash, d->kern_ips) :
				     NULL;
		s.lost_kern = key->kern_stack_hash && !s.kern_ips;
		s.user_ips = key->user_stack_hash ?
				     read_stack(d, stacks_fd, key->user_stack_hash, d->user_ips) :
				     NULL;
		s.lost_user = key->user_stack_hash && !s.user_ips;
		d->stats.stacks_lost += (uint64_t)s.lost_kern + s.lost_user;
		note_hash(d, key->kern_stack_hash);
		note_hash(d, key->user_stack_hash);
		s.interp = read_interp(d, key);
		if (key->interp_stack_hash)
			d->interp_hashes[d->ninterp_hashes++] = key->interp_stack_hash;
		s.span_name =
			key->has_span ? span_names_get(d->names, names_fd, key->span.name_id) : "";
		if (!s.span_name)
			d->stats.span_names_lost += s.count;
		fn(ctx, &s);
	}
	d->stats.keys += n;
	return err;
}

/* Empties what is left of the window's stacks and interpreter stacks after drain_counts(). */
static void clear_hash_stacks(struct drain *d, int stacks_fd)
{
	/* A whole take emptied its map; otherwise clear what is left. */
	if (stacks_fd >= 0 && !d->stacks_taken) {
		delete_hashes(stacks_fd, d->hashes, d->nhashes);
		clear_stacks(d, stacks_fd); /* stacks no sample named: usually none */
	}
	if (d->interp_fd >= 0 && !d->interp_taken) {
		delete_hashes(d->interp_fd, d->interp_hashes, d->ninterp_hashes);
		clear_interp_stacks(d->interp_fd);
	}
}

int drain_window(struct drain *d, int counts_fd, int stacks_fd, int names_fd, drain_sample_fn fn,
		 void *ctx)
{
	int err = drain_counts(d, counts_fd, stacks_fd, 0, names_fd, fn, ctx);

	clear_hash_stacks(d, stacks_fd);
	return err;
}

int drain_window_shared_stacks(struct drain *d, int counts_fd, int stacks_fd, int names_fd,
			       drain_sample_fn fn, void *ctx)
{
	int err = drain_counts(d, counts_fd, stacks_fd, 1, names_fd, fn, ctx);

	clear_hash_stacks(d, -1);
	return err;
}

void drain_get_stats(const struct drain *d, struct drain_stats *out)
{
	*out = d->stats;
}
