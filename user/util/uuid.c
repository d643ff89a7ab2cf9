// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Random (version 4) UUIDs (RFC 9562 section 5.4) from the kernel's getrandom(). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>

#include "util/uuid.h"

int uuid_v4(char out[UUID_STR_SIZE])
{
	uint8_t u[16];
	ssize_t n;

	/* 16 bytes never come back short (only reads over 256 bytes can), but a signal may
	 * interrupt the call before the pool is ready. */
	do
		n = getrandom(u, sizeof(u), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != sizeof(u))
		return -EIO;
	u[6] = (u[6] & 0x0f) | 0x40; /* version 4 */
	u[8] = (u[8] & 0x3f) | 0x80; /* variant 10xx */
	snprintf(out, UUID_STR_SIZE,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	return 0;
}
