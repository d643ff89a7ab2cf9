// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* "HOST:PORT" parsing shared by the configuration (validation) and the metrics server (bind). */
#include <errno.h>
#include <string.h>

#include "util/hostport.h"

static int parse_port(const char *s, unsigned int *port)
{
	unsigned int v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	*port = v;
	return 0;
}

int hostport_split(const char *s, char *host, size_t host_size, unsigned int *port)
{
	const char *colon, *start = s, *end;

	if (!s)
		return -EINVAL;
	if (*s == '[') {
		start = s + 1;
		end = strchr(start, ']');
		if (!end || end == start || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', colon - s))
			return -EINVAL;
		end = colon;
	}
	if ((size_t)(end - start) >= host_size || parse_port(colon + 1, port))
		return -EINVAL;
	memcpy(host, start, end - start);
	host[end - start] = '\0';
	return 0;
}
