/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Levelled one-line logging to stderr, with helpers that return the error they report. */
#ifndef SPANPROF_LOG_H
#define SPANPROF_LOG_H

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/* Sets the most verbose level printed (default LOG_LEVEL_INFO). Process-wide, set once by main(). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_err()/log_warn() print and return `err` unchanged, so callers can write
 * `return log_err(-errno, "open %s (pid %d)", path, pid);`. A negative err is printed as its
 * strerror text after the message. */
int log_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int log_warn(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* SPANPROF_LOG_H */
