// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One line per event, logfmt or JSON, escaped so that a line stays one valid record; warnings
 * and errors that repeat are rate-limited per (format string, source) and summarised. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/json_escape.h"
#include "util/log.h"
#include "util/utf8.h"

#define MSG_MAX 1024
#define LAST_MAX 256
#define LINE_MAX_BYTES 8192
/* Room kept at the end of a line for the closing quote, brace and newline. */
#define LINE_RESERVE 8
/* (format, source) pairs being limited: a fixed table. A pair keeps its slot until its window
 * is over, so no flood of other sources can take it or reset its count. */
#define LIMIT_SLOTS LOG_LIMIT_SOURCES
/* When every slot holds a pair whose window is still running, a line from a new pair is limited
 * with the other newcomers of its format (one slot per format, keyed by format alone), and when
 * those are all taken too, with every newcomer (one last slot). */
#define OVERFLOW_SLOTS LOG_LIMIT_OVERFLOW_FORMATS
#define SOURCE_OVERFLOW (-2L) /* the source of a per-format overflow slot */
/* An escaped byte takes at most 6 bytes (\u00XX): the longest message, with an error text or a
 * summary's last message, always fits, so lines are never cut in practice. */
_Static_assert(LINE_MAX_BYTES > 6 * (MSG_MAX + LAST_MAX) + 256, "log line buffer");
#define STR_(x) #x
#define STR(x) STR_(x)

/* One format string from one source being rate-limited. */
struct limit_slot {
	const char *fmt; /* the key: call sites share the literal */
	long source; /* and the pid or file it is about (LOG_NO_SOURCE: none) */
	enum log_level level;
	uint64_t start_ns; /* start of the current window */
	unsigned int printed; /* lines printed in this window */
	unsigned long long suppressed; /* lines not printed in this window */
	char last[LAST_MAX]; /* the last suppressed message, for the summary */
};

/* The logger's settings and rate-limit table: its only state (see log.h). */
static atomic_int max_level = LOG_LEVEL_INFO;
static atomic_int line_format = LOG_FORMAT_LOGFMT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *output;
static log_clock_fn clock_fn;
static unsigned int limit_burst = 10;
static uint64_t limit_window_ns = 60 * NS_PER_S;
static struct limit_slot slots[LIMIT_SLOTS + OVERFLOW_SLOTS + 1];
static size_t pending; /* slots with suppressed > 0 */
static atomic_ullong suppressed_total[LOG_SUPPRESSED_REASONS]; /* lines not printed, ever */

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

static const char *const format_names[] = {
	[LOG_FORMAT_LOGFMT] = "logfmt",
	[LOG_FORMAT_JSON] = "json",
};

void log_set_level(enum log_level level)
{
	atomic_store(&max_level, level);
}

enum log_level log_get_level(void)
{
	return atomic_load(&max_level);
}

void log_set_format(enum log_format format)
{
	atomic_store(&line_format, format);
}

static int find_name(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -EINVAL;
}

int log_parse_level(const char *s, enum log_level *out)
{
	int i = find_name(level_names, 4, s);

	if (i < 0)
		return i;
	*out = i;
	return 0;
}

int log_parse_format(const char *s, enum log_format *out)
{
	int i = find_name(format_names, 2, s);

	if (i < 0)
		return i;
	*out = i;
	return 0;
}

void log_set_output(FILE *out)
{
	pthread_mutex_lock(&lock);
	output = out;
	pthread_mutex_unlock(&lock);
}

void log_set_clock(log_clock_fn clock)
{
	pthread_mutex_lock(&lock);
	clock_fn = clock;
	pthread_mutex_unlock(&lock);
}

void log_set_rate_limit(unsigned int burst, unsigned int window_s)
{
	pthread_mutex_lock(&lock);
	limit_burst = burst;
	limit_window_ns = (uint64_t)window_s * NS_PER_S;
	memset(slots, 0, sizeof(slots));
	pending = 0;
	pthread_mutex_unlock(&lock);
}

/* A line being built; appends that do not fit are dropped whole, so escapes are never cut. */
struct line {
	char buf[LINE_MAX_BYTES];
	size_t len;
};

static void put_n(struct line *l, const char *s, size_t n)
{
	if (l->len + n > sizeof(l->buf) - LINE_RESERVE)
		return;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void put(struct line *l, const char *s)
{
	put_n(l, s, strlen(s));
}

static void put_piece(void *ctx, const char *s, size_t n)
{
	put_n(ctx, s, n);
}

/* Appends s as the inside of a JSON string, which is also a valid quoted logfmt value. */
static void put_escaped(struct line *l, const char *s)
{
	json_escape(s, put_piece, l);
}

static void put_stamp(struct line *l, uint64_t ns)
{
	char stamp[40];
	time_t sec = ns / NS_PER_S;
	struct tm tm;
	size_t n;

	gmtime_r(&sec, &tm);
	n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + n, sizeof(stamp) - n, ".%03uZ", (unsigned int)(ns % NS_PER_S / 1000000));
	put(l, stamp);
}

/* Writes one line: ts, level, then the fields whose value is not NULL. Called locked. */
static void emit(uint64_t ts, enum log_level level, const char *const *keys,
		 const char *const *values, size_t n)
{
	int json = atomic_load(&line_format) == LOG_FORMAT_JSON;
	FILE *out = output ? output : stderr;
	struct line l;
	size_t i;

	l.len = 0;
	put(&l, json ? "{\"ts\":\"" : "ts=");
	put_stamp(&l, ts);
	put(&l, json ? "\",\"level\":\"" : " level=");
	put(&l, level_names[level]);
	put(&l, json ? "\"" : "");
	for (i = 0; i < n; i++) {
		if (!values[i])
			continue;
		put(&l, json ? ",\"" : " ");
		put(&l, keys[i]);
		put(&l, json ? "\":\"" : "=\"");
		put_escaped(&l, values[i]);
		put(&l, "\"");
	}
	/* LINE_RESERVE keeps room for these. */
	memcpy(l.buf + l.len, json ? "}\n" : "\n", json ? 2 : 1);
	l.len += json ? 2 : 1;
	fwrite(l.buf, 1, l.len, out);
	fflush(out);
}

static void emit_msg(uint64_t ts, enum log_level level, const char *msg, const char *err)
{
	static const char *const keys[] = { "msg", "err" };
	const char *values[] = { msg, err };

	emit(ts, level, keys, values, 2);
}

static int is_overflow(const struct limit_slot *s)
{
	return s >= &slots[LIMIT_SLOTS];
}

/* Prints slot's summary line, if it suppressed anything, and empties it. Called locked. */
static void flush_slot(struct limit_slot *s, uint64_t now)
{
	static const char *const keys[] = { "msg", "last" };
	const char *values[2];
	char msg[160];

	if (!s->suppressed)
		return;
	snprintf(msg, sizeof(msg), "suppressed %llu similar message%s%s", s->suppressed,
		 s->suppressed == 1 ? "" : "s",
		 is_overflow(s) ? " from sources past the log's table of " STR(LIMIT_SLOTS) : "");
	values[0] = msg;
	values[1] = s->last;
	emit(now, s->level, keys, values, 2);
	s->suppressed = 0;
	pending--;
}

/* Prints the summaries of windows that are over. Called locked. */
static void flush_expired(uint64_t now, int all)
{
	size_t i;

	for (i = 0; pending && i < sizeof(slots) / sizeof(slots[0]); i++)
		if (all || now < slots[i].start_ns || now - slots[i].start_ns >= limit_window_ns)
			flush_slot(&slots[i], now);
}

static int window_over(const struct limit_slot *s, uint64_t now)
{
	return !s->fmt || now < s->start_ns || now - s->start_ns >= limit_window_ns;
}

/* Looks (fmt, source) up among n slots: its own slot, else one that is free or whose window is
 * over (its summary printed, then emptied for the pair), else NULL. Called locked. */
static struct limit_slot *slot_in(struct limit_slot *table, size_t n, const char *fmt, long source,
				  uint64_t now)
{
	struct limit_slot *s, *reuse = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		s = &table[i];
		if (s->fmt == fmt && s->source == source)
			return s;
		if (!reuse && window_over(s, now))
			reuse = s;
		if (!s->fmt)
			break;
	}
	if (!reuse)
		return NULL;
	flush_slot(reuse, now);
	memset(reuse, 0, sizeof(*reuse));
	reuse->fmt = fmt;
	reuse->source = source;
	reuse->start_ns = now;
	return reuse;
}

/* The slot for (fmt, source): its own, or a free one; when all are held by pairs whose window
 * still runs, the overflow slot of fmt, or the last slot shared by every format. Called
 * locked. */
static struct limit_slot *find_slot(const char *fmt, long source, uint64_t now)
{
	static const char any_format[] = "";
	struct limit_slot *last = &slots[LIMIT_SLOTS + OVERFLOW_SLOTS];
	struct limit_slot *s = slot_in(slots, LIMIT_SLOTS, fmt, source, now);

	s = s ?: slot_in(&slots[LIMIT_SLOTS], OVERFLOW_SLOTS, fmt, SOURCE_OVERFLOW, now);
	s = s ?: slot_in(last, 1, any_format, SOURCE_OVERFLOW, now);
	return s ?: last;
}

/* 1 when a warning or error with this format about source may print now. Called locked. */
static int limit_admit(const char *fmt, long source, enum log_level level, const char *msg,
		       uint64_t now)
{
	struct limit_slot *s;
	size_t len;

	if (!limit_burst || level > LOG_LEVEL_WARN)
		return 1;
	s = find_slot(fmt, source, now);
	s->level = level;
	if (now < s->start_ns || now - s->start_ns >= limit_window_ns) {
		flush_slot(s, now);
		s->start_ns = now;
		s->printed = 0;
	}
	if (s->printed < limit_burst) {
		s->printed++;
		return 1;
	}
	if (!s->suppressed++)
		pending++;
	atomic_fetch_add(&suppressed_total[is_overflow(s) ? LOG_SUPPRESSED_SOURCES_FULL :
							    LOG_SUPPRESSED_RATE],
			 1);
	len = strlen(msg);
	if (len >= sizeof(s->last))
		len = utf8_boundary(msg, sizeof(s->last) - 1);
	memcpy(s->last, msg, len);
	s->last[len] = '\0';
	return 0;
}

static void log_vprint(enum log_level level, long source, int err, const char *fmt, va_list ap)
{
	char msg[MSG_MAX];
	uint64_t now;

	if ((int)level > atomic_load(&max_level))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	pthread_mutex_lock(&lock);
	now = clock_fn ? clock_fn() : clock_real_ns();
	if (pending)
		flush_expired(now, 0);
	if (limit_admit(fmt, source, level, msg, now))
		emit_msg(now, level, msg, err < 0 ? strerror(-err) : NULL);
	pthread_mutex_unlock(&lock);
}

void log_flush_suppressed(void)
{
	pthread_mutex_lock(&lock);
	flush_expired(clock_fn ? clock_fn() : clock_real_ns(), 1);
	pthread_mutex_unlock(&lock);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(level, LOG_NO_SOURCE, 0, fmt, ap);
	va_end(ap);
}

int log_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(LOG_LEVEL_ERROR, LOG_NO_SOURCE, err, fmt, ap);
	va_end(ap);
	return err;
}

int log_warn(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(LOG_LEVEL_WARN, LOG_NO_SOURCE, err, fmt, ap);
	va_end(ap);
	return err;
}

int log_warn_from(long source, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(LOG_LEVEL_WARN, source, err, fmt, ap);
	va_end(ap);
	return err;
}

uint64_t log_suppressed_total(enum log_suppressed_reason reason)
{
	return reason < LOG_SUPPRESSED_REASONS ? atomic_load(&suppressed_total[reason]) : 0;
}
