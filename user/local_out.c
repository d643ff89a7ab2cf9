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

#include "local_out.h"
#include "log.h"

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

/* Writes all of buf to fd, then fsyncs. Returns 0 or -errno. */
static int write_all_sync(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return fsync(fd) ? -errno : 0;
}

/* Makes the rename itself durable. Best effort: the data is already safe in the file. */
static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	fsync(fd);
	close(fd);
}

int local_out_write(const char *dir, int64_t window_start_ns, unsigned int seq, const char *service,
		    const uint8_t *gz, size_t len, char *path_out, size_t path_size)
{
	char name[NAME_MAX], tmp[PATH_MAX], final[PATH_MAX];
	int fd, err;

	if (!dir || (!gz && len))
		return log_err(-EINVAL, "local output: no directory or data");
	file_name(window_start_ns, seq, service, name, sizeof(name));
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp) ||
	    snprintf(final, sizeof(final), "%s/%s", dir, name) >= (int)sizeof(final) ||
	    (path_out && strlen(final) >= path_size))
		return log_err(-ENAMETOOLONG, "local output path for %s", name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return log_err(-errno, "create %s", tmp);
	err = write_all_sync(fd, gz, len);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		log_err(err, "write %s", tmp);
		goto out_unlink;
	}
	if (rename(tmp, final)) {
		err = log_err(-errno, "rename %s to %s", tmp, final);
		goto out_unlink;
	}
	sync_dir(dir);
	if (path_out)
		memcpy(path_out, final, strlen(final) + 1);
	return 0;
out_unlink:
	unlink(tmp);
	return err;
}
