/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The window and mappings the pprof encoder's unit tests feed it. */
#ifndef SPANPROF_TEST_PPROF_TEST_MAPS_H
#define SPANPROF_TEST_PPROF_TEST_MAPS_H

#define PERIOD_NS 10000000LL /* 100 Hz */
#define T0 1700000000123456789LL
#define DURATION 15000000000LL

/* Macros, not constants: C wants constant expressions in static initialisers. */
#define APP_MAP                                                        \
	{                                                              \
		0x400000, 0x500000, 0x1000, "/usr/bin/app", "abcdef01" \
	}
#define LIB_MAP                                                                 \
	{                                                                       \
		0x7f0000000000, 0x7f0000100000, 0, "/usr/lib/libfoo.so.1", NULL \
	}

#endif /* SPANPROF_TEST_PPROF_TEST_MAPS_H */
