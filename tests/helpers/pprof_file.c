// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only pprof reader (see pprof_file.h): gunzip + protobuf-c decode, sample queries, and a
 * parse check with the Go toolchain's pprof. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof_file.h"

/* Larger decoded profiles are treated as corrupt rather than exhausting memory. */
#define PPROF_FILE_MAX_BYTES (256u << 20)

int pprof_gunzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = len * 4 + 1024;
	uint8_t *dst = NULL, *p;
	int zerr;

	/* windowBits 15 + 32: accept gzip or zlib headers. */
	if (len > PPROF_FILE_MAX_BYTES || inflateInit2(&zs, 15 + 32) != Z_OK)
		return -EINVAL;
	zs.next_in = (Bytef *)buf;
	zs.avail_in = len;
	do {
		if (cap > PPROF_FILE_MAX_BYTES || !(p = realloc(dst, cap))) {
			zerr = Z_MEM_ERROR;
			break;
		}
		dst = p;
		zs.next_out = dst + zs.total_out;
		zs.avail_out = cap - zs.total_out;
		zerr = inflate(&zs, Z_NO_FLUSH);
		cap *= 2;
	} while (zerr == Z_OK || (zerr == Z_BUF_ERROR && zs.avail_out == 0));
	if (zerr != Z_STREAM_END) {
		inflateEnd(&zs);
		free(dst);
		return zerr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	*out = dst;
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return 0;
}

Perftools__Profiles__Profile *pprof_decode(const uint8_t *buf, size_t len)
{
	Perftools__Profiles__Profile *p;
	uint8_t *raw = NULL;
	size_t raw_len;

	if (!buf)
		return NULL;
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		if (pprof_gunzip(buf, len, &raw, &raw_len))
			return NULL;
		buf = raw;
		len = raw_len;
	}
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(raw);
	return p;
}

/* Reads a whole regular file into a malloc'ed buffer. Returns 0 or -errno. */
static int read_all(const char *path, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < 0 || (size_t)st.st_size > PPROF_FILE_MAX_BYTES) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		got += n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = got;
	return 0;
}

Perftools__Profiles__Profile *pprof_file_read(const char *path)
{
	Perftools__Profiles__Profile *p;
	uint8_t *buf = NULL;
	size_t len = 0;

	if (read_all(path, &buf, &len))
		return NULL;
	p = pprof_decode(buf, len);
	free(buf);
	return p;
}

int pprof_file_each(const char *dir, const char *service, const char *kind, pprof_profile_fn fn,
		    void *ctx)
{
	char suffix[512], path[4096];
	Perftools__Profiles__Profile *p;
	struct dirent *de;
	size_t len, slen;
	int files = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	snprintf(suffix, sizeof(suffix), "-%s%s%s.pb.gz", service, kind ? "." : "",
		 kind ? kind : "");
	slen = strlen(suffix);
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len <= slen || strcmp(de->d_name + len - slen, suffix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = pprof_file_read(path);
		if (!p) {
			printf("cannot decode %s\n", path);
			files = -1;
			break;
		}
		fn(p, path, ctx);
		pprof_file_free(p);
		files++;
	}
	closedir(d);
	return files;
}

void pprof_file_free(Perftools__Profiles__Profile *p)
{
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
}

const char *pprof_str(const Perftools__Profiles__Profile *p, int64_t idx)
{
	if (!p || idx < 0 || (uint64_t)idx >= p->n_string_table)
		return NULL;
	return p->string_table[idx];
}

const Perftools__Profiles__Location *pprof_location(const Perftools__Profiles__Profile *p,
						    uint64_t id)
{
	size_t i;

	for (i = 0; id && i < p->n_location; i++) {
		if (p->location[i]->id == id)
			return p->location[i];
	}
	return NULL;
}

const Perftools__Profiles__Function *pprof_function(const Perftools__Profiles__Profile *p,
						    uint64_t id)
{
	size_t i;

	for (i = 0; id && i < p->n_function; i++) {
		if (p->function[i]->id == id)
			return p->function[i];
	}
	return NULL;
}

const Perftools__Profiles__Mapping *pprof_mapping(const Perftools__Profiles__Profile *p,
						  uint64_t id)
{
	size_t i;

	for (i = 0; id && i < p->n_mapping; i++) {
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	}
	return NULL;
}

const char *pprof_sample_label(const Perftools__Profiles__Profile *p,
			       const Perftools__Profiles__Sample *s, const char *key)
{
	const char *k;
	size_t i;

	for (i = 0; i < s->n_label; i++) {
		k = pprof_str(p, s->label[i]->key);
		if (k && !strcmp(k, key))
			return pprof_str(p, s->label[i]->str);
	}
	return NULL;
}

/* Name of the function on one Line, or NULL. */
static const char *line_function(const Perftools__Profiles__Profile *p,
				 const Perftools__Profiles__Line *line)
{
	const Perftools__Profiles__Function *fn = pprof_function(p, line->function_id);

	return fn ? pprof_str(p, fn->name) : NULL;
}

const char *pprof_leaf_function(const Perftools__Profiles__Profile *p,
				const Perftools__Profiles__Sample *s)
{
	const Perftools__Profiles__Location *loc;

	if (!s->n_location_id)
		return NULL;
	loc = pprof_location(p, s->location_id[0]);
	if (!loc || !loc->n_line)
		return NULL;
	return line_function(p, loc->line[0]);
}

long pprof_sample_function_depth(const Perftools__Profiles__Profile *p,
				 const Perftools__Profiles__Sample *s, const char *name, int prefix)
{
	const Perftools__Profiles__Location *loc;
	size_t i, j, len = strlen(name);
	const char *fn;

	for (i = 0; i < s->n_location_id; i++) {
		loc = pprof_location(p, s->location_id[i]);
		for (j = 0; loc && j < loc->n_line; j++) {
			fn = line_function(p, loc->line[j]);
			if (fn && (prefix ? !strncmp(fn, name, len) : !strcmp(fn, name)))
				return i;
		}
	}
	return -1;
}

int pprof_sample_has_function(const Perftools__Profiles__Profile *p,
			      const Perftools__Profiles__Sample *s, const char *name)
{
	return pprof_sample_function_depth(p, s, name, 0) >= 0;
}

void pprof_sample_print(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
			size_t max_locations)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Function *fn;

	printf("     ");
	for (size_t i = 0; i < s->n_location_id && i < max_locations; i++) {
		loc = pprof_location(p, s->location_id[i]);
		for (size_t j = 0; loc && j < loc->n_line; j++) {
			fn = pprof_function(p, loc->line[j]->function_id);
			printf(" %s", fn ? pprof_str(p, fn->name) : "?");
		}
	}
	printf("\n");
}

const char *pprof_sample_function_file(const Perftools__Profiles__Profile *p,
				       const Perftools__Profiles__Sample *s, const char *name)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Function *fn;
	const char *fname, *file;
	size_t i, j;

	for (i = 0; i < s->n_location_id; i++) {
		loc = pprof_location(p, s->location_id[i]);
		for (j = 0; loc && j < loc->n_line; j++) {
			fn = pprof_function(p, loc->line[j]->function_id);
			fname = fn ? pprof_str(p, fn->name) : NULL;
			if (!fname || strcmp(fname, name))
				continue;
			file = pprof_str(p, fn->filename);
			return file ? file : "";
		}
	}
	return NULL;
}

int64_t pprof_total_value(const Perftools__Profiles__Profile *p)
{
	int64_t total = 0;
	size_t i;

	for (i = 0; i < p->n_sample; i++) {
		if (p->sample[i]->n_value)
			total += p->sample[i]->value[0];
	}
	return total;
}
