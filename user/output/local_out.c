// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Writes gzipped pprof files into a local directory: created on demand, each file written under a
 * temporary name, fsynced and renamed so readers never see a partial profile. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output/local_out.h"
#include "util/atomic_file.h"
#include "util/log.h"

/* Longer service names are cut so the file name stays well under NAME_MAX. */
#define LOCAL_OUT_SERVICE_MAX 128

static int mkdir_one(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int local_out_prepare(const char *dir)
{
	char path[PATH_MAX];
	size_t len, i;
	int err;

	if (!dir || !*dir)
		return log_err(-EINVAL, "local output directory is empty");
	len = strlen(dir);
	if (len >= sizeof(path))
		return log_err(-ENAMETOOLONG, "local output directory %.64s...", dir);
	memcpy(path, dir, len + 1);
	/* Create each ancestor in turn, as mkdir -p does. */
	for (i = 1; i < len; i++) {
		if (path[i] != '/' || path[i - 1] == '/')
			continue;
		path[i] = '\0';
		err = mkdir_one(path);
		path[i] = '/';
		if (err)
			return log_err(err, "create directory %.*s", (int)i, path);
	}
	err = mkdir_one(path);
	if (err)
		return log_err(err, "create directory %s", path);
	return 0;
}

/* Bytes allowed in file names as they are: [A-Za-z0-9._-]. */
static int name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* <UTC time, ms>-<seq>-<sanitised service>[.<kind>].pb.gz; seq is zero-padded so names sort. */
static void file_name(int64_t window_start_ns, unsigned int seq, const char *service,
		      const char *kind, char *name, size_t size)
{
	char stamp[32], svc[LOCAL_OUT_SERVICE_MAX + 1];
	int64_t ns = window_start_ns > 0 ? window_start_ns : 0;
	time_t secs = ns / 1000000000;
	struct tm tm;
	size_t i;

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (!service || !*service)
		service = "unknown_service";
	for (i = 0; service[i] && i < LOCAL_OUT_SERVICE_MAX; i++)
		svc[i] = name_char_ok(service[i]) ? service[i] : '_';
	svc[i] = '\0';
	snprintf(name, size, "%s.%03dZ-%06u-%s%s%s.pb.gz", stamp, (int)(ns / 1000000 % 1000), seq,
		 svc, kind ? "." : "", kind ? kind : "");
}

int local_out_write(const char *dir, int64_t window_start_ns, unsigned int seq, const char *service,
		    const uint8_t *gz, size_t len, char *path_out, size_t path_size)
{
	return local_out_write_kind(dir, window_start_ns, seq, service, NULL, gz, len, path_out,
				    path_size);
}

int local_out_write_kind(const char *dir, int64_t window_start_ns, unsigned int seq,
			 const char *service, const char *kind, const uint8_t *gz, size_t len,
			 char *path_out, size_t path_size)
{
	char name[NAME_MAX], tmp_name[NAME_MAX + 8], final[PATH_MAX];
	int dirfd, err;

	if (!dir || (!gz && len))
		return log_err(-EINVAL, "local output: no directory or data");
	file_name(window_start_ns, seq, service, kind, name, sizeof(name));
	snprintf(tmp_name, sizeof(tmp_name), ".%s.tmp", name);
	if (snprintf(final, sizeof(final), "%s/%s", dir, name) >= (int)sizeof(final) ||
	    (path_out && strlen(final) >= path_size))
		return log_err(-ENAMETOOLONG, "local output path for %s", name);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return log_err(-errno, "open output directory %s", dir);
	err = atomic_file_write_at(dirfd, tmp_name, name, gz, len, 0644);
	close(dirfd);
	if (err)
		return log_err(err, "write %s", final);
	if (path_out)
		memcpy(path_out, final, strlen(final) + 1);
	return 0;
}

/* n digits at s. */
static int digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* 1 when name is what local_out_write() names a temp file:
 * ".<YYYYmmddTHHMMSS>.<mmm>Z-<seq>-<service>.pb.gz.tmp". */
static int is_our_temp(const char *name)
{
	static const char suffix[] = ".pb.gz.tmp";
	size_t len = strlen(name), n, i;
	const char *p = name + 1;

	if (len < 30 + sizeof(suffix) - 1 || name[0] != '.' ||
	    strcmp(name + len - (sizeof(suffix) - 1), suffix))
		return 0;
	if (!digits(p, 8) || p[8] != 'T' || !digits(p + 9, 6) || p[15] != '.' ||
	    !digits(p + 16, 3) || p[19] != 'Z' || p[20] != '-')
		return 0;
	p += 21;
	n = strspn(p, "0123456789");
	if (n < 6 || p[n] != '-')
		return 0;
	p += n + 1;
	n = name + len - (sizeof(suffix) - 1) - p;
	for (i = 0; i < n; i++)
		if (!name_char_ok(p[i]))
			return 0;
	return n > 0;
}

int local_out_remove_temp(const char *dir)
{
	struct dirent *de;
	struct stat st;
	int fd, removed = 0;
	DIR *d;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		removed = -errno;
		if (fd >= 0)
			close(fd);
		return removed;
	}
	while ((de = readdir(d))) {
		if (!is_our_temp(de->d_name) || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!unlinkat(fd, de->d_name, 0))
			removed++;
	}
	closedir(d);
	return removed;
}

int local_out_open(struct local_out *lo, const char *dir)
{
	int err, n;

	memset(lo, 0, sizeof(*lo));
	lo->dir = dir;
	err = local_out_prepare(dir);
	if (err)
		return err;
	n = local_out_remove_temp(dir);
	if (n < 0)
		return log_err(n, "read output directory %s", dir);
	lo->temp_removed = n;
	if (n)
		log_info("removed %d temporary files an interrupted run left in %s", n, dir);
	return 0;
}

/* Creates the directory again when it was deleted; anything else is left to the write. */
static int ensure_dir(struct local_out *lo)
{
	struct stat st;
	int err;

	if (!stat(lo->dir, &st) || errno != ENOENT)
		return 0;
	err = local_out_prepare(lo->dir);
	if (err)
		return err;
	lo->dir_recreated++;
	if (!lo->gone_logged)
		log_warn(0,
			 "output directory %s was deleted; created it again (every time it "
			 "happens is counted in spanprof_output_dir_recreated_total)",
			 lo->dir);
	lo->gone_logged = 1;
	return 0;
}

int local_out_put(struct local_out *lo, int64_t window_start_ns, unsigned int seq,
		  const char *service, const char *kind, const uint8_t *gz, size_t len)
{
	int err = ensure_dir(lo);

	if (err)
		return err;
	return local_out_write_kind(lo->dir, window_start_ns, seq, service, kind, gz, len, NULL, 0);
}
