// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Levelled one-line logging to stderr: "time level message [: error]". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

/* The one piece of process-wide logging state: the verbosity main() chose. */
static enum log_level max_level = LOG_LEVEL_INFO;

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
}

static void log_vprint(enum log_level level, int err, const char *fmt, va_list ap)
{
	char msg[1024];
	char stamp[32];
	struct timespec now;
	struct tm tm;

	if (level > max_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err < 0)
		fprintf(stderr, "%s.%03ldZ spanprof %s: %s: %s\n", stamp, now.tv_nsec / 1000000,
			level_names[level], msg, strerror(-err));
	else
		fprintf(stderr, "%s.%03ldZ spanprof %s: %s\n", stamp, now.tv_nsec / 1000000,
			level_names[level], msg);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(level, 0, fmt, ap);
	va_end(ap);
}

int log_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(LOG_LEVEL_ERROR, err, fmt, ap);
	va_end(ap);
	return err;
}

int log_warn(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(LOG_LEVEL_WARN, err, fmt, ap);
	va_end(ap);
	return err;
}
