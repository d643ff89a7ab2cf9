// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel CPU list parsing ("0-3,5"). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/cpulist.h"

static int parse_range(const char **p, int *lo, int *hi)
{
	char *end;
	long a, b;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	a = strtol(*p, &end, 10);
	b = a;
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return -EINVAL;
		b = strtol(end + 1, &end, 10);
	}
	if (a > b || b >= CPULIST_MAX_CPUS)
		return -EINVAL;
	*lo = a;
	*hi = b;
	*p = end;
	return 0;
}

int cpulist_parse(const char *text, bool **mask, int *n)
{
	const char *p = text;
	bool *m = NULL;
	int max = -1, lo, hi, err, cpu;

	*mask = NULL;
	*n = 0;
	/* Two passes: the first finds the size, the second fills the mask. */
	for (int pass = 0; pass < 2; pass++) {
		p = text;
		while (*p && *p != '\n') {
			err = parse_range(&p, &lo, &hi);
			if (err)
				goto out_free;
			if (pass == 0 && hi > max)
				max = hi;
			for (cpu = lo; pass == 1 && cpu <= hi; cpu++)
				m[cpu] = true;
			if (*p == ',')
				p++;
			else if (*p && *p != '\n') {
				err = -EINVAL;
				goto out_free;
			}
		}
		if (pass == 0) {
			if (max < 0)
				return -EINVAL;
			m = calloc(max + 1, sizeof(*m));
			if (!m)
				return -ENOMEM;
		}
	}
	*mask = m;
	*n = max + 1;
	return 0;
out_free:
	free(m);
	return err;
}

int cpulist_read(const char *path, bool **mask, int *n)
{
	char buf[4096];
	ssize_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[len] = '\0';
	return cpulist_parse(buf, mask, n);
}
