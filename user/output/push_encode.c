// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Builds and gzips Pyroscope push requests (push.v1.PushRequest) around one pprof profile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/push_encode.h"
#include "profile/pprof.h"
#include "proto/push.pb-c.h"
#include "util/uuid.h"

/* Packs the request around profile; *packed is malloc'ed. */
static int pack_request(const struct series_label_set *set, const uint8_t *profile, size_t len,
			uint8_t **packed, size_t *packed_len)
{
	Push__V1__LabelPair pairs[SERIES_LABELS_MAX], *pairp[SERIES_LABELS_MAX];
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	Push__V1__RawProfileSeries series = PUSH__V1__RAW_PROFILE_SERIES__INIT;
	Push__V1__RawSample sample = PUSH__V1__RAW_SAMPLE__INIT;
	Push__V1__RawProfileSeries *seriesp = &series;
	Push__V1__RawSample *samplep = &sample;
	char id[UUID_STR_SIZE];
	size_t i;
	int err;

	err = uuid_v4(id);
	if (err)
		return err;
	for (i = 0; i < set->n; i++) {
		push__v1__label_pair__init(&pairs[i]);
		pairs[i].name = (char *)set->labels[i].key;
		pairs[i].value = (char *)set->labels[i].value;
		pairp[i] = &pairs[i];
	}
	sample.raw_profile.data = (uint8_t *)profile;
	sample.raw_profile.len = len;
	sample.id = id;
	series.n_labels = set->n;
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
	struct series_label_set set;
	uint8_t *packed = NULL;
	size_t packed_len = 0;
	int err;

	if ((!profile && len) || !out || !out_len)
		return -EINVAL;
	err = series_label_set_build(&set, name, service, labels, nlabels);
	if (err)
		return err;
	err = pack_request(&set, profile, len, &packed, &packed_len);
	if (!err)
		err = pprof_gzip(packed, packed_len, out, out_len);
	free(packed);
	series_label_set_release(&set);
	return err;
}
