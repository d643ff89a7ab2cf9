// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only pprof fixtures for the viewer (see view_fixture.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "proto/profile.pb-c.h"
#include "view_fixture.h"

typedef Perftools__Profiles__Profile pb_profile;

/* String indexes of the fixture's table. */
enum {
	S_EMPTY,
	S_TYPE,
	S_NS,
	S_MAIN,
	S_HANDLE,
	S_PARSE,
	S_OTHER,
	S_IDLE,
	S_MAIN_C,
	S_PARSE_C,
	S_SPAN_ID,
	S_SPAN_NAME,
	S_A1,
	S_B2,
	S_GET_A,
	S_GET_B,
	S_COUNT
};

static uint8_t *gzip(const uint8_t *raw, size_t n, size_t *len)
{
	z_stream zs = { 0 };
	size_t cap = n + 1024;
	uint8_t *out = malloc(cap);

	if (!out || deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (Bytef *)raw;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return NULL;
	}
	*len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

uint8_t *view_fixture_profile(const char *type, int gz, size_t *len)
{
	char *strs[S_COUNT] = { "",
				(char *)type,
				"nanoseconds",
				"main",
				"handle",
				"parse",
				"other",
				"idle",
				"main.c",
				"parse.c",
				"span_id",
				"span_name",
				"00000000000000a1",
				"00000000000000b2",
				"GET /a",
				"GET /b" };
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				       *vts[1] = { &vt };
	Perftools__Profiles__Function fn[5];
	Perftools__Profiles__Function *fns[5];
	Perftools__Profiles__Line ln[6], *loc_lines[5][2];
	Perftools__Profiles__Location loc[5], *locs[5];
	Perftools__Profiles__Label lab[4], *labs[2][2];
	Perftools__Profiles__Sample smp[3], *smps[3];
	uint64_t stacks[3][3] = { { 3, 2, 1 }, { 4, 1 }, { 5, 1 } };
	size_t stack_n[3] = { 3, 2, 2 };
	int64_t values[3] = { 30000000, 20000000, 50000000 };
	int64_t names[5] = { S_MAIN, S_HANDLE, S_PARSE, S_OTHER, S_IDLE };
	int64_t files[5] = { S_MAIN_C, S_MAIN_C, S_PARSE_C, S_MAIN_C, S_MAIN_C };
	int64_t lines[5] = { 10, 20, 5, 30, 40 };
	pb_profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint8_t *raw, *out;
	size_t n, i;

	vt.type = S_TYPE;
	vt.unit = S_NS;
	for (i = 0; i < 5; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fn[i].name = names[i];
		fn[i].filename = files[i];
		fns[i] = &fn[i];
		perftools__profiles__line__init(&ln[i]);
		ln[i].function_id = i + 1;
		ln[i].line = lines[i];
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = i + 1;
		loc[i].n_line = 1;
		loc[i].line = loc_lines[i];
		loc_lines[i][0] = &ln[i];
		locs[i] = &loc[i];
	}
	/* Location 3 holds parse inlined into handle: callee first. */
	perftools__profiles__line__init(&ln[5]);
	ln[5].function_id = 2;
	ln[5].line = 21;
	loc_lines[2][1] = &ln[5];
	loc[2].n_line = 2;
	for (i = 0; i < 4; i++)
		perftools__profiles__label__init(&lab[i]);
	lab[0].key = S_SPAN_ID, lab[0].str = S_A1;
	lab[1].key = S_SPAN_NAME, lab[1].str = S_GET_A;
	lab[2].key = S_SPAN_ID, lab[2].str = S_B2;
	lab[3].key = S_SPAN_NAME, lab[3].str = S_GET_B;
	labs[0][0] = &lab[0], labs[0][1] = &lab[1], labs[1][0] = &lab[2], labs[1][1] = &lab[3];
	for (i = 0; i < 3; i++) {
		perftools__profiles__sample__init(&smp[i]);
		smp[i].n_location_id = stack_n[i];
		smp[i].location_id = stacks[i];
		smp[i].n_value = 1;
		smp[i].value = &values[i];
		smp[i].n_label = i < 2 ? 2 : 0;
		smp[i].label = i < 2 ? labs[i] : NULL;
		smps[i] = &smp[i];
	}
	p.n_sample_type = 1, p.sample_type = vts;
	p.n_sample = 3, p.sample = smps;
	p.n_location = 5, p.location = locs;
	p.n_function = 5, p.function = fns;
	p.n_string_table = S_COUNT, p.string_table = strs;
	p.time_nanos = 1700000000000000000LL;
	p.duration_nanos = 1000000000LL;
	n = perftools__profiles__profile__get_packed_size(&p);
	raw = malloc(n + 1);
	if (!raw)
		return NULL;
	perftools__profiles__profile__pack(&p, raw);
	if (!gz) {
		*len = n;
		return raw;
	}
	out = gzip(raw, n, len);
	free(raw);
	return out;
}

int view_fixture_write(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[1024];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ok = write(fd, buf, len) == (ssize_t)len;
	return close(fd) || !ok ? -1 : 0;
}
