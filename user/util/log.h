/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Levelled one-line logging (logfmt or JSON), with helpers that return the error they report
 * and a rate limit for warnings and errors that repeat. */
#ifndef SPANPROF_LOG_H
#define SPANPROF_LOG_H

#include <stdint.h>
#include <stdio.h>

/* State: the logger's settings (level, format, output, clock, rate limit) and its rate-limit
 * table are the only mutable state this module keeps. They are process-wide by nature, as
 * stderr is; main() sets them once before starting threads. A mutex guards the table and the
 * output, so any thread may log. */

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

enum log_format {
	LOG_FORMAT_LOGFMT = 0, /* ts=... level=warn msg="..." err="..." */
	LOG_FORMAT_JSON, /* {"ts":"...","level":"warn","msg":"...","err":"..."} */
};

/* Sets the most verbose level printed (default LOG_LEVEL_INFO). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Sets the line format (default LOG_FORMAT_LOGFMT). */
void log_set_format(enum log_format format);

/* Parses "error|warn|info|debug" and "logfmt|json". Return 0, or -EINVAL for other text. */
int log_parse_level(const char *s, enum log_level *out);
int log_parse_format(const char *s, enum log_format *out);

/* Where lines go (default stderr; NULL restores it). The stream is not owned. */
void log_set_output(FILE *out);

/* Nanoseconds since the epoch; tests inject a fake. NULL restores the real clock. */
typedef uint64_t (*log_clock_fn)(void);
void log_set_clock(log_clock_fn clock);

/* Warnings and errors with the same format string and source (log_warn_from) print at most
 * `burst` times per window of `window_s` seconds; the rest are counted, and once the window is
 * over one line says "suppressed K similar messages". Default 10 per 60 s; burst 0 turns the
 * limit off. Resets what was counted so far (without printing it).
 *
 * The table of (format, source) pairs has LOG_LIMIT_SOURCES slots, a fixed size. A pair keeps
 * its slot until its window is over, so a pair that holds one prints its first `burst` lines of
 * every window, however many other sources flood. When every slot is held by a running window,
 * a new pair is limited together with the other newcomers of its format (LOG_LIMIT_OVERFLOW_FORMATS
 * formats, then one slot for all), counted as LOG_SUPPRESSED_SOURCES_FULL: warnings printed per
 * window never exceed (LOG_LIMIT_SOURCES + LOG_LIMIT_OVERFLOW_FORMATS + 1) * burst. */
void log_set_rate_limit(unsigned int burst, unsigned int window_s);

/* Prints the summary lines still pending for suppressed messages, even if their windows are not
 * over yet. Call before exit so that no count is lost. */
void log_flush_suppressed(void);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_err()/log_warn() print and return `err` unchanged, so callers can write
 * `return log_err(-errno, "open %s (pid %d)", path, pid);`. A negative err is printed as its
 * strerror text in the line's err field. */
int log_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int log_warn(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_warn about a source an application controls (a pid, or a file's inode): rate-limited per
 * (format, source), so a flood from one pid cannot hide another pid's line of the same kind. */
#define LOG_NO_SOURCE (-1L)
int log_warn_from(long source, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define LOG_LIMIT_SOURCES 256
#define LOG_LIMIT_OVERFLOW_FORMATS 32

/* Why a line was not printed. */
enum log_suppressed_reason {
	LOG_SUPPRESSED_RATE = 0, /* its (format, source) printed `burst` lines this window */
	LOG_SUPPRESSED_SOURCES_FULL, /* no slot of its own: its format's newcomers printed theirs */
	LOG_SUPPRESSED_REASONS,
};

/* Lines the rate limit did not print since the start, for one reason (for /metrics). */
uint64_t log_suppressed_total(enum log_suppressed_reason reason);

#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* SPANPROF_LOG_H */
