/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Random (version 4) UUIDs from getrandom(), used as the ids of pushed profiles. */
#ifndef SPANPROF_UUID_H
#define SPANPROF_UUID_H

/* "xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx" plus the NUL (N is 8, 9, a or b). */
#define UUID_STR_SIZE 37

/* Writes a new random v4 UUID, lower-case, into out. Returns 0 or -errno from getrandom(). */
int uuid_v4(char out[UUID_STR_SIZE]);

#endif /* SPANPROF_UUID_H */
