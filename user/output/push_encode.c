// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Builds and gzips Pyroscope push requests (push.v1.PushRequest) around one pprof profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/push_encode.h"
#include "profile/pprof.h"
#include "proto/push.pb-c.h"
#include "util/utf8.h"
#include "util/uuid.h"

static int pair_cmp(const void *a, const void *b)
{
	const Push__V1__LabelPair *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* service, repaired to UTF-8 and cut at a character boundary; malloc'ed. */
static char *service_value(const char *service)
{
	char *s;
	size_t n;

	s = utf8_sanitize(service && *service ? service : PUSH_UNKNOWN_SERVICE);
	if (!s)
		return NULL;
	n = strlen(s);
	if (n > SERIES_LABEL_VALUE_MAX)
		s[utf8_boundary(s, SERIES_LABEL_VALUE_MAX)] = '\0';
	return s;
}

/* Packs the request around profile; *packed is malloc'ed. */
static int pack_request(const char *name, char *service, const struct pprof_label *labels,
			size_t nlabels, const uint8_t *profile, size_t len, uint8_t **packed,
			size_t *packed_len)
{
	Push__V1__LabelPair pairs[SERIES_LABELS_MAX], *pairp[SERIES_LABELS_MAX];
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	Push__V1__RawProfileSeries series = PUSH__V1__RAW_PROFILE_SERIES__INIT;
	Push__V1__RawSample sample = PUSH__V1__RAW_SAMPLE__INIT;
	Push__V1__RawProfileSeries *seriesp = &series;
	Push__V1__RawSample *samplep = &sample;
	char id[UUID_STR_SIZE];
	size_t i, n = 0;
	int err;

	err = uuid_v4(id);
	if (err)
		return err;
	for (i = 0; i < nlabels + 2; i++) {
		push__v1__label_pair__init(&pairs[i]);
		pairp[i] = &pairs[i];
	}
	pairs[n].name = "__name__";
	pairs[n++].value = (char *)name;
	pairs[n].name = "service_name";
	pairs[n++].value = service;
	for (i = 0; i < nlabels; i++, n++) {
		pairs[n].name = (char *)labels[i].key;
		pairs[n].value = (char *)labels[i].value;
	}
	qsort(pairp, n, sizeof(pairp[0]), pair_cmp);
	sample.raw_profile.data = (uint8_t *)profile;
	sample.raw_profile.len = len;
	sample.id = id;
	series.n_labels = n;
	series.labels = pairp;
	series.n_samples = 1;
	series.samples = &samplep;
	req.n_series = 1;
	req.series = &seriesp;
	*packed_len = push__v1__push_request__get_packed_size(&req);
	*packed = malloc(*packed_len ? *packed_len : 1);
	if (!*packed)
		return -ENOMEM;
	push__v1__push_request__pack(&req, *packed);
	return 0;
}

const char *push_profile_name(const char *sample_type)
{
	return !sample_type || !strcmp(sample_type, "cpu") ? PUSH_PROFILE_NAME : sample_type;
}

int push_encode(const char *service, const struct pprof_label *labels, size_t nlabels,
		const uint8_t *profile, size_t len, uint8_t **out, size_t *out_len)
{
	return push_encode_named(PUSH_PROFILE_NAME, service, labels, nlabels, profile, len, out,
				 out_len);
}

int push_encode_named(const char *name, const char *service, const struct pprof_label *labels,
		      size_t nlabels, const uint8_t *profile, size_t len, uint8_t **out,
		      size_t *out_len)
{
	uint8_t *packed = NULL;
	size_t packed_len = 0;
	char *svc;
	int err;

	if (!name || !name[0] || (!profile && len) || (!labels && nlabels) ||
	    nlabels > SERIES_LABELS_MAX_STATIC || !out || !out_len)
		return -EINVAL;
	svc = service_value(service);
	if (!svc)
		return -ENOMEM;
	err = pack_request(name, svc, labels, nlabels, profile, len, &packed, &packed_len);
	if (!err)
		err = pprof_gzip(packed, packed_len, out, out_len);
	free(packed);
	free(svc);
	return err;
}
