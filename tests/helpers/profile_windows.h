/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: the windows (profiles) a service wrote into an output directory, timed by the
 * start each file name carries ("20261122T121314.567Z-<service>.pb.gz", UTC). Times are seconds
 * since the epoch, so windows on both sides of midnight compare right. */
#ifndef SPANPROF_TEST_PROFILE_WINDOWS_H
#define SPANPROF_TEST_PROFILE_WINDOWS_H

/* Now, in the clock of the file names: seconds since the epoch. */
double profile_windows_now_s(void);

/* Window start of a profile file name in seconds since the epoch, or -1 when it has none. */
double profile_window_start_s(const char *name);

/* Profiles of service in dir whose window started at or after from_s (0: all of them);
 * *max_gap_s (may be NULL) gets the longest time between two consecutive starts. */
int profile_windows_since(const char *dir, const char *service, double from_s, double *max_gap_s);

#endif /* SPANPROF_TEST_PROFILE_WINDOWS_H */
