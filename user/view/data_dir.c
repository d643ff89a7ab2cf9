// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Directory listing of profiles and span logs, classified by name. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "view/data_dir.h"

#define PROFILE_SUFFIX ".pb.gz"
#define OFF_CPU_SUFFIX ".off_cpu.pb.gz"
#define SPAN_LOG_SUFFIX ".spans.jsonl"

static int ends_with(const char *s, const char *suffix, size_t *stem_len)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n < m || strcmp(s + n - m, suffix))
		return 0;
	*stem_len = n - m;
	return 1;
}

/* "YYYYmmddTHHMMSS.mmmZ" (20 characters) as Unix ns, or -1. */
static int64_t parse_stamp(const char *s)
{
	struct tm tm = { 0 };
	const char *end;
	int ms, i;

	for (i = 0; i < 20; i++)
		if (!s[i])
			return -1;
	end = strptime(s, "%Y%m%dT%H%M%S", &tm);
	if (end != s + 15 || s[15] != '.' || s[19] != 'Z' || sscanf(s + 16, "%3d", &ms) != 1)
		return -1;
	return (int64_t)timegm(&tm) * 1000000000LL + (int64_t)ms * 1000000LL;
}

int data_dir_parse_profile_name(const char *name, struct profile_file *pf)
{
	size_t stem_end, i;
	const char *p;
	int64_t start;

	memset(pf, 0, sizeof(*pf));
	if (strlen(name) >= DATA_NAME_MAX || name[0] == '.')
		return -EINVAL;
	if (ends_with(name, OFF_CPU_SUFFIX, &stem_end))
		pf->kind = VIEW_KIND_OFF_CPU;
	else if (!ends_with(name, PROFILE_SUFFIX, &stem_end))
		return -EINVAL;
	start = parse_stamp(name);
	if (start < 0 || name[20] != '-')
		return -EINVAL;
	p = name + 21;
	for (i = 0; p[i] >= '0' && p[i] <= '9'; i++)
		;
	if (!i || p[i] != '-' || p + i + 1 >= name + stem_end)
		return -EINVAL;
	p += i + 1;
	memcpy(pf->stem, p, (size_t)(name + stem_end - p));
	pf->stem[name + stem_end - p] = '\0';
	snprintf(pf->name, sizeof(pf->name), "%s", name);
	pf->start_ns = start;
	return 0;
}

/* <stem>.spans.jsonl or <stem>.spans.jsonl.<digits>. */
static int parse_log_name(const char *name, struct span_log_file *lf)
{
	const char *at = strstr(name, SPAN_LOG_SUFFIX), *p;

	if (!at || at == name || name[0] == '.' || strlen(name) >= DATA_NAME_MAX)
		return -EINVAL;
	p = at + strlen(SPAN_LOG_SUFFIX);
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
		if (p == at + strlen(SPAN_LOG_SUFFIX) + 1)
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	memset(lf, 0, sizeof(*lf));
	memcpy(lf->stem, name, (size_t)(at - name));
	snprintf(lf->name, sizeof(lf->name), "%s", name);
	return 0;
}

static int cmp_profile(const void *a, const void *b)
{
	const struct profile_file *x = a, *y = b;
	int c = strcmp(x->stem, y->stem);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int push(void **v, size_t *n, size_t *cap, size_t size, const void *item)
{
	size_t ncap;
	void *p;

	if (*n == *cap) {
		ncap = *cap ? *cap * 2 : 256;
		p = realloc(*v, ncap * size);
		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = ncap;
	}
	memcpy((char *)*v + *n * size, item, size);
	(*n)++;
	return 0;
}

/* Sorts one entry into profiles or logs. Returns 0 or -ENOMEM. */
static int add_entry(struct data_dir *dd, int dfd, const char *name, size_t max_files,
		     size_t caps[2], struct problems *pr)
{
	struct profile_file pf;
	struct span_log_file lf;
	struct stat st;
	int is_profile;

	is_profile = !data_dir_parse_profile_name(name, &pf);
	if (!is_profile && parse_log_name(name, &lf))
		return 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return 0;
	if ((is_profile ? dd->nprofiles : dd->nlogs) >= max_files) {
		dd->skipped++;
		return 0;
	}
	if (!st.st_size) {
		problems_add(pr, name, "empty file");
		return 0;
	}
	if (is_profile) {
		pf.size = (uint64_t)st.st_size;
		return push((void **)&dd->profiles, &dd->nprofiles, &caps[0], sizeof(pf), &pf);
	}
	lf.size = (uint64_t)st.st_size;
	return push((void **)&dd->logs, &dd->nlogs, &caps[1], sizeof(lf), &lf);
}

int data_dir_scan(struct data_dir *dd, const char *dir, size_t max_files, struct problems *pr)
{
	size_t caps[2] = { 0, 0 };
	struct dirent *de;
	DIR *d;
	int err = 0;

	memset(dd, 0, sizeof(*dd));
	d = opendir(dir);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d)))
		err = add_entry(dd, dirfd(d), de->d_name, max_files, caps, pr);
	closedir(d);
	if (err) {
		data_dir_release(dd);
		return err;
	}
	if (dd->nprofiles) /* profiles is NULL in an empty directory: qsort() must not see it */
		qsort(dd->profiles, dd->nprofiles, sizeof(*dd->profiles), cmp_profile);
	return 0;
}

void data_dir_release(struct data_dir *dd)
{
	free(dd->profiles);
	free(dd->logs);
	memset(dd, 0, sizeof(*dd));
}

long data_dir_find(const struct data_dir *dd, const char *stem, enum view_kind kind, size_t *n)
{
	size_t lo = 0, hi = dd->nprofiles, mid, i;
	int c;

	/* The first entry at or after (stem, kind). */
	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(dd->profiles[mid].stem, stem);
		if (c < 0 || (!c && dd->profiles[mid].kind < kind))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < dd->nprofiles && !strcmp(dd->profiles[i].stem, stem) &&
		     dd->profiles[i].kind == kind;
	     i++)
		;
	*n = i - lo;
	return *n ? (long)lo : -1;
}
