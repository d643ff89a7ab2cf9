// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Encodes one service's window profile for a local file (one gzipped pprof) and for a push
 * (pprof chunks within the server's limits, each in a gzipped push request). */
#include <errno.h>
#include <stdlib.h>

#include "output/push_encode.h"
#include "output/window_encode.h"

int window_encode_file(struct pprof_builder *b, uint8_t **gz, size_t *gz_len)
{
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int err;

	err = pprof_builder_encode(b, &raw, &raw_len);
	if (!err)
		err = pprof_gzip(raw, raw_len, gz, gz_len);
	free(raw);
	return err;
}

struct push_chunks {
	const struct window_push *p;
	const char *name; /* the series' __name__ */
	window_push_fn fn;
	void *ctx;
};

static int push_chunk(void *ctx, const uint8_t *buf, size_t len, size_t nsamples)
{
	struct push_chunks *c = ctx;
	const struct window_push *p = c->p;
	uint8_t *body = NULL;
	size_t body_len = 0;
	int err;

	(void)nsamples;
	if (p->max_bytes && len > p->max_bytes) /* the server would refuse it */
		return c->fn(c->ctx, NULL, 0, -E2BIG);
	err = push_encode_named(c->name, p->service, p->labels, p->nlabels, buf, len, &body,
				&body_len);
	if (err)
		return c->fn(c->ctx, NULL, 0, err);
	return c->fn(c->ctx, body, body_len, 0);
}

int window_encode_push(struct pprof_builder *b, const struct window_push *p, window_push_fn fn,
		       void *ctx)
{
	struct push_chunks c = { .p = p, .fn = fn, .ctx = ctx };

	if (!b || !p || !fn)
		return -EINVAL;
	if (!pprof_builder_sample_count(b))
		return 0;
	c.name = push_profile_name(pprof_builder_sample_type(b));
	return pprof_builder_encode_chunks_omit(b, p->omit_key, p->max_samples, p->max_bytes,
						push_chunk, &c);
}
