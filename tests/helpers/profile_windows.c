// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: windows a service wrote, timed from their file names (see profile_windows.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile_windows.h"

#define MAX_WINDOWS 1024

double profile_windows_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double profile_window_start_s(const char *name)
{
	struct tm tm = { 0 };
	double sec;

	if (sscanf(name, "%4d%2d%2dT%2d%2d%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + sec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int profile_windows_since(const char *dir, const char *service, double from_s, double *max_gap_s)
{
	double starts[MAX_WINDOWS];
	char suffix[300];
	struct dirent *de;
	size_t len, slen;
	int n = 0, i;
	double t;
	DIR *d = opendir(dir);

	snprintf(suffix, sizeof(suffix), "-%s.pb.gz", service);
	slen = strlen(suffix);
	while (d && (de = readdir(d)) && n < MAX_WINDOWS) {
		len = strlen(de->d_name);
		if (len > slen && !strcmp(de->d_name + len - slen, suffix) &&
		    (t = profile_window_start_s(de->d_name)) >= 0 && t >= from_s)
			starts[n++] = t;
	}
	if (d)
		closedir(d);
	qsort(starts, n, sizeof(starts[0]), cmp_double);
	if (max_gap_s)
		*max_gap_s = 0;
	for (i = 1; max_gap_s && i < n; i++)
		if (starts[i] - starts[i - 1] > *max_gap_s)
			*max_gap_s = starts[i] - starts[i - 1];
	return n;
}
