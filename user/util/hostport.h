/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Splits "HOST:PORT" listen addresses ("127.0.0.1:9100", "[::1]:9100", ":9100"). */
#ifndef SPANPROF_HOSTPORT_H
#define SPANPROF_HOSTPORT_H

#include <stddef.h>

/* Copies the host of s into host (size host_size; "" for ":PORT", meaning every address; an
 * IPv6 address without its brackets) and its port (0..65535) into *port. A host with ':' must
 * be bracketed. Returns 0, or -EINVAL for anything else (no port, a port out of range, a host
 * too long or empty brackets). */
int hostport_split(const char *s, char *host, size_t host_size, unsigned int *port);

#endif /* SPANPROF_HOSTPORT_H */
