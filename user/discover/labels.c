// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Label values spanprof derives itself: a process's service name (OpenTelemetry environment
 * variables, else its executable's name) and hex text for span ids. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover/labels.h"
#include "spanprof_hex.h"
#include "util/log.h"
#include "util/series_labels.h"
#include "util/text_clean.h"
#include "util/utf8.h"

/* The kernel keeps 15 bytes of a task's name (TASK_COMM_LEN less the NUL). */
#define LABELS_COMM_MAX 15

/* Bound on what is read of /proc/PID/environ; the variables we want are normally near the top. */
#define LABELS_ENVIRON_MAX (64 * 1024)

/* A piece of a larger buffer: not NUL-terminated. */
struct span {
	const char *p;
	size_t len;
};

/* Copies s into out (size bytes with the NUL), cutting at a UTF-8 character boundary. */
static void copy_out(struct span s, char *out, size_t size)
{
	size_t n = s.len;

	if (n > size - 1)
		n = utf8_boundary(s.p, size - 1);
	memcpy(out, s.p, n);
	out[n] = '\0';
}

/* Value of variable name in an environ block; the first occurrence wins, as with getenv(). */
static int env_get(const char *env, size_t len, const char *name, struct span *val)
{
	size_t nlen = strlen(name), elen, i = 0;
	const char *e, *end;

	while (i < len) {
		e = env + i;
		end = memchr(e, '\0', len - i);
		elen = end ? (size_t)(end - e) : len - i;
		if (elen > nlen && !memcmp(e, name, nlen) && e[nlen] == '=') {
			val->p = e + nlen + 1;
			val->len = elen - nlen - 1;
			return 1;
		}
		i += elen + 1;
	}
	return 0;
}

static struct span trim(struct span s)
{
	while (s.len && (s.p[0] == ' ' || s.p[0] == '\t')) {
		s.p++;
		s.len--;
	}
	while (s.len && (s.p[s.len - 1] == ' ' || s.p[s.len - 1] == '\t'))
		s.len--;
	return s;
}

/* Percent-decodes s into dst (at least s.len bytes); a '%' not followed by two hex digits is
 * kept as it is. Returns the decoded length. */
static size_t percent_decode(struct span s, char *dst)
{
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < s.len; i++) {
		if (s.p[i] == '%' && i + 2 < s.len) {
			hi = spanprof_hex_digit(s.p[i + 1]);
			lo = spanprof_hex_digit(s.p[i + 2]);
			if (hi >= 0 && lo >= 0) {
				dst[o++] = (char)(hi << 4 | lo);
				i += 2;
				continue;
			}
		}
		dst[o++] = s.p[i];
	}
	return o;
}

/* The raw (still percent-encoded) service.name value in OTEL_RESOURCE_ATTRIBUTES' k=v list. */
static int resource_service_name(struct span attrs, struct span *val)
{
	const char *end = attrs.p + attrs.len, *item = attrs.p, *comma, *eq;
	struct span key;

	while (item < end) {
		comma = memchr(item, ',', end - item);
		if (!comma)
			comma = end;
		eq = memchr(item, '=', comma - item);
		if (eq) {
			key = trim((struct span){ item, eq - item });
			if (key.len == 12 && !memcmp(key.p, "service.name", 12)) {
				*val = trim((struct span){ eq + 1, comma - eq - 1 });
				return 1;
			}
		}
		item = comma + 1;
	}
	return 0;
}

void labels_clean(char *s)
{
	text_clean(s);
}

/* service.name from OTEL_RESOURCE_ATTRIBUTES, decoded into out. Returns 1 if found and
 * non-empty, 0 if not, -ENOMEM. */
static int service_from_resource(const char *env, size_t len, char *out, size_t size)
{
	struct span attrs, val;
	char *dec;

	if (!env_get(env, len, "OTEL_RESOURCE_ATTRIBUTES", &attrs) ||
	    !resource_service_name(attrs, &val))
		return 0;
	dec = malloc(val.len + 1);
	if (!dec)
		return -ENOMEM;
	val.len = percent_decode(val, dec);
	val.p = dec;
	copy_out(val, out, size);
	free(dec);
	return out[0] != '\0';
}

int labels_service_from_environ(const char *environ, size_t environ_len, const char *exe_name,
				char *out, size_t size)
{
	struct span val;
	int found;

	if (!out || !size || (!environ && environ_len))
		return -EINVAL;
	if (env_get(environ, environ_len, "OTEL_SERVICE_NAME", &val) && val.len) {
		copy_out(val, out, size);
	} else {
		found = service_from_resource(environ, environ_len, out, size);
		if (found < 0)
			return found;
		if (!found) {
			if (!exe_name || !*exe_name)
				exe_name = SERIES_LABEL_UNKNOWN_SERVICE;
			copy_out((struct span){ exe_name, strlen(exe_name) }, out, size);
		}
	}
	labels_clean(out);
	return 0;
}

int labels_service_from_values(const char *otel_service_name, const char *otel_resource_attributes,
			       const char *exe_name, char *out, size_t size)
{
	const char *sn = otel_service_name ? otel_service_name : "";
	const char *ra = otel_resource_attributes ? otel_resource_attributes : "";
	size_t len = strlen(sn) + strlen(ra) + 64;
	char *env = malloc(len);
	int n, err;

	if (!env)
		return -ENOMEM;
	/* An environ block: "K=V\0K=V\0". */
	n = snprintf(env, len, "OTEL_SERVICE_NAME=%s%cOTEL_RESOURCE_ATTRIBUTES=%s", sn, '\0', ra);
	err = labels_service_from_environ(env, (size_t)n + 1, exe_name, out, size);
	free(env);
	return err;
}

/* Reads up to cap bytes of a (proc) file. Returns the length read or -errno. */
static ssize_t read_bounded(const char *path, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < cap) {
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	return got;
}

static int gone(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

/* The basename of the /proc/PID/exe link into name ("" when unreadable, e.g. kernel threads). */
static void exe_name(const char *proc_root, pid_t pid, char *name, size_t size)
{
	char path[4096], link[4096];
	const char *base;
	ssize_t n;

	name[0] = '\0';
	snprintf(path, sizeof(path), "%s/%d/exe", proc_root, (int)pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	/* The kernel marks a replaced binary "/path (deleted)"; the name is what matters. */
	if (n > 10 && !strcmp(link + n - 10, " (deleted)"))
		link[n - 10] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	copy_out((struct span){ base, strlen(base) }, name, size);
}

/* The process's name: its executable's file name. comm is that name cut at 15 bytes, so it is
 * used only when it is not such a cut: a script's comm is the script's name (its exe is the
 * interpreter), and a thread may have renamed itself. Without an exe link (kernel threads),
 * comm. Returns 0 (name may be empty when neither is readable) or -ENOENT/-ESRCH. */
static int process_name(const char *proc_root, pid_t pid, char *name, size_t size)
{
	char path[4096], exe[256];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/comm", proc_root, (int)pid);
	n = read_bounded(path, name, size - 1);
	if (gone(n))
		return n;
	if (n > 0 && name[n - 1] == '\n')
		n--;
	name[n > 0 ? n : 0] = '\0';
	exe_name(proc_root, pid, exe, sizeof(exe));
	if (exe[0] && (n <= 0 || (n == LABELS_COMM_MAX && !strncmp(exe, name, n))))
		copy_out((struct span){ exe, strlen(exe) }, name, size);
	return 0;
}

int labels_service_for_pid(const char *proc_root, pid_t pid, char *out, size_t size)
{
	return labels_service_for_pid_or(proc_root, pid, NULL, out, size);
}

int labels_service_for_pid_or(const char *proc_root, pid_t pid, const char *fallback, char *out,
			      size_t size)
{
	char path[4096], name[256];
	ssize_t len;
	char *env;
	int err;

	if (!proc_root || pid <= 0 || !out || !size)
		return -EINVAL;
	env = malloc(LABELS_ENVIRON_MAX);
	if (!env)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%d/environ", proc_root, (int)pid);
	len = read_bounded(path, env, LABELS_ENVIRON_MAX);
	if (gone(len)) {
		err = len;
		goto out_free_env;
	}
	/* Unreadable (e.g. EACCES): fall back to the process name, as for kernel threads. */
	if (len < 0) {
		log_debug("read %s: %s", path, strerror((int)-len));
		len = 0;
	}
	err = fallback ? 0 : process_name(proc_root, pid, name, sizeof(name));
	if (!err)
		err = labels_service_from_environ(env, len, fallback ? fallback : name, out, size);
out_free_env:
	free(env);
	return err;
}

void labels_hex(const uint8_t *bytes, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int labels_is_zero(const uint8_t *bytes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (bytes[i])
			return 0;
	}
	return 1;
}
