/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reads the pprof labels span_id and span_name of a goroutine (runtime.g.labels) into a span
 * context: how apps instrumented with Grafana's otel-profiling-go label goroutines, and how the
 * Go runtime hands a span to the goroutines started inside it (newproc copies g.labels). */
#ifndef SPANPROF_GO_LABELS_BPF_H
#define SPANPROF_GO_LABELS_BPF_H

#include "maps.bpf.h"
#include "spanprof_hex.h"

/* Go 1.17-1.23 map[string]string: hmap.B at 9, hmap.buckets at 16; a bucket is 8 tophash
 * bytes, 8 keys, 8 values (strings of 16 bytes) and an overflow pointer. tophash >= 5 marks a
 * used slot (runtime/map.go minTopHash). */
#define GO_HMAP_B 9
#define GO_HMAP_BUCKETS 16
#define GO_BUCKET_SLOTS 8
#define GO_BUCKET_SIZE (8 + 2 * GO_BUCKET_SLOTS * 16 + 8)
#define GO_MIN_TOPHASH 5
/* Bounds for the verifier and for time in the sampler: 2^3 buckets (maps of up to ~52 labels)
 * without their overflow buckets, and the first 16 labels of a 1.24+ label slice. */
#define GO_MAX_B 3
#define GO_MAX_SLICE_LABELS 16

struct go_string {
	__u64 ptr;
	__u64 len;
};

/* span_id: 16 hex digits into 8 bytes; anything else leaves the id zero (name only). */
static __always_inline void take_span_id(struct span_ctx *out, const struct go_string *v)
{
	char hex[16];
	int i;

	if (v->len != 16 || bpf_probe_read_user(hex, sizeof(hex), (void *)v->ptr))
		return;
	for (i = 0; i < 8; i++) {
		int hi = spanprof_hex_digit(hex[2 * i]), lo = spanprof_hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			__builtin_memset(out->span_id, 0, sizeof(out->span_id));
			return;
		}
		out->span_id[i] = (__u8)(hi << 4 | lo);
	}
}

/* memcmp for the verifier: clang emits a call to memcmp for __builtin_memcmp here. */
static __always_inline int bytes_equal(const char *a, const char *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* State shared with the bpf_loop() callbacks: a loop body is verified once, not once per
 * unrolled iteration, which keeps the sampler under the verifier's complexity limit. */
struct label_walk {
	struct span_ctx *out;
	struct go_string name; /* where span_name's value is, for the caller to intern */
	__u64 base; /* buckets (map) or list.ptr (slice) */
	int found;
	int fault;
};

/* Looks at one label; returns bit 1 for span_id, bit 2 for span_name when it is one of them. The
 * name is only located here: the caller reads and hashes it once, after the walk, so the hash
 * loop is not verified inside each bpf_loop() callback. */
static __always_inline int take_label(struct label_walk *w, const struct go_string *k,
				      const struct go_string *v)
{
	char key[16];

	if ((k->len != 7 && k->len != 9) || bpf_probe_read_user(key, k->len & 15, (void *)k->ptr))
		return 0;
	if (k->len == 7 && bytes_equal(key, "span_id", 7)) {
		take_span_id(w->out, v);
		return 1;
	}
	if (k->len == 9 && bytes_equal(key, "span_name", 9)) {
		w->name = *v;
		return 2;
	}
	return 0;
}

/* One slot of a map bucket: i / 8 is the bucket, i % 8 the slot in it. */
static long map_slot(__u64 i, void *ctx)
{
	struct label_walk *w = ctx;
	__u64 bucket = w->base + (i / GO_BUCKET_SLOTS) * GO_BUCKET_SIZE;
	__u64 s = i % GO_BUCKET_SLOTS;
	struct go_string kv[2];
	__u8 top;

	if (bpf_probe_read_user(&top, sizeof(top), (void *)(bucket + s))) {
		w->fault = 1;
		return 1;
	}
	if (top < GO_MIN_TOPHASH)
		return 0;
	if (bpf_probe_read_user(&kv[0], sizeof(kv[0]), (void *)(bucket + 8 + s * 16)) ||
	    bpf_probe_read_user(&kv[1], sizeof(kv[1]),
				(void *)(bucket + 8 + GO_BUCKET_SLOTS * 16 + s * 16))) {
		w->fault = 1;
		return 1;
	}
	w->found |= take_label(w, &kv[0], &kv[1]);
	return 0;
}

/* One element of a 1.24+ label slice. */
static long slice_elem(__u64 i, void *ctx)
{
	struct label_walk *w = ctx;
	struct go_string kv[2];

	if (bpf_probe_read_user(kv, sizeof(kv), (void *)(w->base + i * sizeof(kv)))) {
		w->fault = 1;
		return 1;
	}
	w->found |= take_label(w, &kv[0], &kv[1]);
	return 0;
}

/* Go 1.17-1.23: labels -> *labelMap (a map, i.e. an *hmap) -> buckets. */
static __always_inline int read_label_map(struct label_walk *w, __u64 labels)
{
	__u64 hmap;
	__u8 b;

	if (bpf_probe_read_user(&hmap, sizeof(hmap), (void *)labels) || !hmap ||
	    bpf_probe_read_user(&b, sizeof(b), (void *)(hmap + GO_HMAP_B)) ||
	    bpf_probe_read_user(&w->base, sizeof(w->base), (void *)(hmap + GO_HMAP_BUCKETS)))
		return -EFAULT;
	if (!w->base)
		return 0; /* empty map */
	if (b > GO_MAX_B)
		b = GO_MAX_B;
	bpf_loop(GO_BUCKET_SLOTS << b, map_slot, w, 0);
	return w->fault ? -EFAULT : w->found;
}

/* Go 1.24+: labels -> labelMap{LabelSet{list []label}}, label = {key, value string}. */
static __always_inline int read_label_slice(struct label_walk *w, __u64 labels)
{
	struct go_string list;

	if (bpf_probe_read_user(&list, sizeof(list), (void *)labels))
		return -EFAULT;
	w->base = list.ptr;
	bpf_loop(list.len < GO_MAX_SLICE_LABELS ? list.len : GO_MAX_SLICE_LABELS, slice_elem, w, 0);
	return w->fault ? -EFAULT : w->found;
}

/* Fills out (zeroed here) from goroutine g's pprof labels: the span_id label's id, and in name
 * (zeroed here) where the span_name label's value is, which the caller interns into
 * out->name_id. Returns 1 when a span_id or span_name label was found, 0 when none (or the version
 * is unknown), -EFAULT when memory was unreadable. */
static __always_inline int go_labels_span(__u64 g, const struct go_proc *gp, struct span_ctx *out,
					  struct go_string *name)
{
	struct label_walk w = { .out = out };
	__u64 labels;
	int found;

	__builtin_memset(out, 0, sizeof(*out));
	__builtin_memset(name, 0, sizeof(*name));
	if (gp->labels_kind == SPANPROF_GO_LABELS_NONE || !gp->labels_offset)
		return 0;
	if (bpf_probe_read_user(&labels, sizeof(labels), (void *)(g + gp->labels_offset)))
		return -EFAULT;
	if (!labels)
		return 0;
	if (gp->labels_kind == SPANPROF_GO_LABELS_MAP)
		found = read_label_map(&w, labels);
	else
		found = read_label_slice(&w, labels);
	if (found <= 0)
		return found;
	*name = w.name;
	out->abi_version = SPANPROF_ABI_VERSION;
	return 1;
}

#endif /* SPANPROF_GO_LABELS_BPF_H */
