// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Writes gzipped pprof files into a local directory: created on demand, each file written under a
 * temporary name, fsynced and renamed so readers never see a partial profile. */
#define _GNU_SOURCE
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

/* <UTC time, ms>-<seq>-<sanitised service>.pb.gz; seq is zero-padded so names sort. */
static void file_name(int64_t window_start_ns, unsigned int seq, const char *service, char *name,
		      size_t size)
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
	snprintf(name, size, "%s.%03dZ-%06u-%s.pb.gz", stamp, (int)(ns / 1000000 % 1000), seq, svc);
}

int local_out_write(const char *dir, int64_t window_start_ns, unsigned int seq, const char *service,
		    const uint8_t *gz, size_t len, char *path_out, size_t path_size)
{
	char name[NAME_MAX], tmp_name[NAME_MAX + 8], final[PATH_MAX];
	int dirfd, err;

	if (!dir || (!gz && len))
		return log_err(-EINVAL, "local output: no directory or data");
	file_name(window_start_ns, seq, service, name, sizeof(name));
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
