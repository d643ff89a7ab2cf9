// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decodes the few fields spanprof needs from a ProcessContext protobuf (user/proto/
 * process_context.proto): resource(1).attributes(1) KeyValue{key 1, value 2: AnyValue{
 * string_value 1}}, and the context's attributes(2) for thread context keys (AnyValue
 * array_value 5: ArrayValue{values 1}). A bounded, non-recursive walk: hostile nesting cannot
 * exhaust the stack. */
#include <errno.h>
#include <string.h>

#include "discover/process_ctx.h"
#include "util/text_clean.h"
#include "util/utf8.h"

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

/* A length-delimited piece of the payload. */
struct pb {
	const uint8_t *p, *end;
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		uint8_t c = *b->p++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -EBADMSG;
}

/* The next field of b: its number and, for length-delimited ones, its bytes in *val (other wire
 * types are skipped and *val is empty). Returns 1, 0 at the end, or -EBADMSG. */
static int pb_next(struct pb *b, uint32_t *num, struct pb *val)
{
	uint64_t key, len;

	if (b->p == b->end)
		return 0;
	if (pb_varint(b, &key) || !(key >> 3) || key >> 32)
		return -EBADMSG;
	*num = (uint32_t)(key >> 3);
	val->p = val->end = b->p;
	switch (key & 7) {
	case WT_VARINT:
		return pb_varint(b, &len) ? -EBADMSG : 1;
	case WT_FIXED64:
		len = 8;
		break;
	case WT_FIXED32:
		len = 4;
		break;
	case WT_LEN:
		if (pb_varint(b, &len))
			return -EBADMSG;
		val->p = b->p;
		break;
	default: /* groups are not used by OTLP */
		return -EBADMSG;
	}
	if (len > (uint64_t)(b->end - b->p))
		return -EBADMSG;
	b->p += len;
	if ((key & 7) == WT_LEN)
		val->end = b->p;
	return 1;
}

/* AnyValue's string_value into out (cut at a character; control characters and invalid UTF-8
 * bytes become '?').
 * Returns 1 when it was a non-empty string, 0 otherwise, -EBADMSG. */
static int any_string(struct pb any, char *out, size_t size)
{
	struct pb val;
	uint32_t num;
	size_t n;
	int r;

	while ((r = pb_next(&any, &num, &val)) == 1) {
		if (num != 1 || val.p == val.end)
			continue;
		n = (size_t)(val.end - val.p);
		if (memchr(val.p, '\0', n))
			return 0;
		if (n > size - 1)
			n = size - 1;
		memcpy(out, val.p, n);
		out[n] = '\0';
		out[utf8_boundary(out, n)] = '\0';
		text_clean(out);
		return out[0] != '\0';
	}
	return r;
}

static int key_is(struct pb key, const char *want)
{
	size_t n = strlen(want);

	return (size_t)(key.end - key.p) == n && !memcmp(key.p, want, n);
}

/* A KeyValue's key (field 1) and AnyValue (field 2). Returns 1 with both, 0 when one is missing,
 * or pb_next()'s error. */
static int split_key_value(struct pb kv, struct pb *key, struct pb *any)
{
	struct pb val;
	uint32_t num;
	int r;

	*key = *any = (struct pb){ NULL, NULL };
	while ((r = pb_next(&kv, &num, &val)) == 1) {
		if (num == 1)
			*key = val;
		else if (num == 2)
			*any = val;
	}
	return r < 0 ? r : key->p && any->p;
}

/* One KeyValue of the resource. */
static int key_value(struct pb kv, struct process_ctx *out)
{
	struct pb key, any;
	int r = split_key_value(kv, &key, &any);

	if (r <= 0)
		return r;
	/* Keys are unique in a resource; should one repeat, the first one wins. */
	if (key_is(key, "service.name") && !out->service_name[0])
		r = any_string(any, out->service_name, sizeof(out->service_name));
	else if (key_is(key, "service.namespace") && !out->service_namespace[0])
		r = any_string(any, out->service_namespace, sizeof(out->service_namespace));
	return r < 0 ? r : 0;
}

/* threadlocal.attribute_key_map: an AnyValue whose array_value (5) holds AnyValues. */
static int key_map(struct pb any, struct process_ctx *out)
{
	struct pb arr = { NULL, NULL }, val, item;
	size_t used = 0, n;
	uint32_t num;
	int r;

	while ((r = pb_next(&any, &num, &val)) == 1)
		if (num == 5)
			arr = val;
	if (r < 0 || !arr.p)
		return r;
	out->nkeys = 0;
	while ((r = pb_next(&arr, &num, &item)) == 1) {
		if (num != 1)
			continue;
		if (out->nkeys == PROCESS_CTX_MAX_KEYS)
			return 0;
		/* The longest key that fits what is left; a longer one ends the map here. */
		n = sizeof(out->key_names) - used;
		if (n < 2)
			return 0;
		out->key_names[used] = '\0';
		if (any_string(item, out->key_names + used, n) < 0)
			return -EBADMSG;
		n = strlen(out->key_names + used);
		if (used + n + 1 >= sizeof(out->key_names))
			return 0;
		out->key_at[out->nkeys++] = (uint16_t)used;
		used += n + 1;
	}
	return r;
}

/* One KeyValue of the context's own attributes (field 2). */
static int context_attr(struct pb kv, struct process_ctx *out)
{
	struct pb key, any;
	int r = split_key_value(kv, &key, &any);

	if (r <= 0)
		return r;
	if (key_is(key, "threadlocal.schema_version"))
		r = any_string(any, out->tls_schema, sizeof(out->tls_schema));
	else if (key_is(key, "threadlocal.attribute_key_map"))
		r = key_map(any, out);
	return r < 0 ? r : 0;
}

int process_ctx_decode(const uint8_t *buf, size_t len, struct process_ctx *out)
{
	struct pb top = { buf, buf + len }, res, attr;
	uint32_t num;
	int r, s;

	memset(out, 0, sizeof(*out));
	while ((r = pb_next(&top, &num, &res)) == 1) {
		if (num == 2 && context_attr(res, out) < 0)
			return -EBADMSG;
		if (num != 1)
			continue; /* unknown fields */
		while ((s = pb_next(&res, &num, &attr)) == 1)
			if (num == 1 && key_value(attr, out) < 0)
				return -EBADMSG;
		if (s < 0)
			return -EBADMSG;
	}
	return r < 0 ? -EBADMSG : 0;
}
