// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: reading workload output and span logs, writing small input files (see
 * text_file.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "text_file.h"

void text_file_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

void proc_file_write(const char *proc_root, int pid, const char *name, const void *data, size_t len)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", proc_root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, pid, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

void proc_file_write_at(const char *proc_root, int pid, const char *name, const void *data,
			size_t len, uint64_t at)
{
	char path[4300];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", proc_root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, pid, name);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, (off_t)at), (ssize_t)len);
	close(fd);
}

long text_file_lines_with(const char *path, const char *text)
{
	char line[4096];
	long n = 0;
	FILE *fp = fopen(path, "r");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		n += strstr(line, text) != NULL;
	fclose(fp);
	return n;
}

long long text_file_number(const char *path, const char *key)
{
	char buf[4096], *p;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, key);
	return p ? atoll(p + strlen(key)) : -1;
}
