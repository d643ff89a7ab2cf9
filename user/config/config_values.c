// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The configuration's values: strings it owns, the one error line for a bad value, and the
 * parsers and checks of its value types (integers, sizes with suffixes, booleans, labels,
 * headers, tenant ids and server URLs). Every config*.c file calls in; this calls none back. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config_int.h"
#include "util/series_labels.h"
#include "util/utf8.h"

/* A bad value is cut to this many bytes in the error line. */
#define ERROR_VALUE_MAX 80

char *config_strdup(struct spanprof_config *cfg, const char *s, size_t n)
{
	struct config_strings *o = &cfg->owned;
	char **grown, *copy;

	if (o->n == o->cap) {
		grown = realloc(o->v, (o->cap ? 2 * o->cap : 16) * sizeof(*o->v));
		if (!grown)
			return NULL;
		o->v = grown;
		o->cap = o->cap ? 2 * o->cap : 16;
	}
	copy = strndup(s, n);
	if (copy)
		o->v[o->n++] = copy;
	return copy;
}

int config_hint(FILE *err)
{
	fprintf(err, "Try 'spanprof --help' for more information.\n");
	return CONFIG_ERROR;
}

/* Writes s[0..n) with control characters escaped. */
static void put_escaped(FILE *err, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			fprintf(err, "\\x%02x", p[i]);
		else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			fprintf(err, "\\x%02x", p[++i]); /* U+0080..U+009F: C1 controls */
		else
			fputc(p[i], err);
	}
}

int config_verrorf(FILE *err, const char *where, const char *fmt, va_list ap)
{
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	int newline = where != NULL;

	fputs("spanprof: ", err);
	if (where) {
		put_escaped(err, where, strlen(where));
		fputs(": ", err);
	}
	if (n < 0) {
		fputs("out of memory\n", err);
		return CONFIG_ERROR;
	}
	if (n && msg[n - 1] == '\n') {
		n--;
		newline = 1;
	}
	put_escaped(err, msg, n);
	if (newline)
		fputc('\n', err);
	free(msg);
	return CONFIG_ERROR;
}

int config_errorf(FILE *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_verrorf(err, NULL, fmt, ap);
	va_end(ap);
	return CONFIG_ERROR;
}

/* How much of value an error may show: all of it, or for a secret header only its name. */
static size_t shown_length(const struct config_option *opt, const char *value)
{
	size_t n = strlen(value), name;

	if (opt->secret == CONFIG_SECRET_VALUE) {
		/* Only a plain header name followed by ':' is shown; without a colon the whole
		 * value might be the secret. */
		name = strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				     "0123456789!#$%&'*+-.^_`|~");
		return value[name] == ':' ? name + 1 : 0;
	}
	/* A long value is cut, so that the line still shows what was expected. */
	return n > ERROR_VALUE_MAX ? utf8_boundary(value, ERROR_VALUE_MAX) : n;
}

int config_bad_value(FILE *err, const char *where, const struct config_option *opt,
		     const char *value, const char *want)
{
	size_t n;

	value = value ? value : "";
	if (opt->secret == CONFIG_SECRET_ALL) {
		config_errorf(err, "%s: invalid value (not shown): expected %s\n", where, want);
		return config_hint(err);
	}
	n = shown_length(opt, value);
	if (opt->secret == CONFIG_SECRET_VALUE)
		config_errorf(err, "%s: invalid value '%.*s%s': expected %s\n", where, (int)n,
			      value, n ? " (value not shown)" : "(not shown)", want);
	else
		config_errorf(err, "%s: invalid value '%.*s%s': expected %s\n", where, (int)n,
			      value, value[n] ? "..." : "", want);
	return config_hint(err);
}

int config_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (*s - '0');
	}
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int config_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	static const struct {
		const char *suffix;
		unsigned int shift;
	} units[] = {
		{ "", 0 },     { "K", 10 }, { "KiB", 10 }, { "M", 20 },
		{ "MiB", 20 }, { "G", 30 }, { "GiB", 30 },
	};
	char digits[24];
	size_t n, i;
	uint64_t v;

	if (!s)
		return -EINVAL;
	n = strspn(s, "0123456789");
	if (!n || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, n);
	digits[n] = '\0';
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].suffix))
			continue;
		if (config_parse_uint(digits, 0, UINT64_MAX >> units[i].shift, &v))
			return -EINVAL;
		v <<= units[i].shift;
		if (v < min || v > max)
			return -EINVAL;
		*out = v;
		return 0;
	}
	return -EINVAL;
}

int config_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; s && i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

int config_check_label(const char *s, size_t *name_len, const char **want)
{
	const char *eq = strchr(s, '=');

	*want = "KEY=VALUE";
	if (!eq || eq == s)
		return -EINVAL;
	*want = series_label_check(s, eq - s, eq + 1);
	if (*want)
		return -EINVAL;
	*name_len = eq - s;
	return 0;
}

/* Headers the uploader sets itself: framing and content. */
static const char *const owned_headers[] = {
	"Host",	     "Content-Length", "Content-Type", "Content-Encoding", "Transfer-Encoding",
	"Connection"
};

static int is_token_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

int config_check_header(const char *s, size_t *name_len, const char **value, size_t *value_len,
			const char **want)
{
	const char *v, *end;
	size_t n = 0, i;

	*want = "'Name: value' with a header name of RFC 9110 token characters";
	while (is_token_char(s[n]))
		n++;
	if (!n || s[n] != ':')
		return -EINVAL;
	*want = "a header other than Host, Content-Length, Content-Type, Content-Encoding, "
		"Transfer-Encoding and Connection (the uploader sets them)";
	for (i = 0; i < sizeof(owned_headers) / sizeof(owned_headers[0]); i++)
		if (strlen(owned_headers[i]) == n && !strncasecmp(s, owned_headers[i], n))
			return -EINVAL;
	v = s + n + 1;
	v += strspn(v, " \t");
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*want = "'Name: value' with a non-empty value without control characters";
	if (end == v)
		return -EINVAL;
	for (i = 0; v + i < end; i++)
		if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
			return -EINVAL;
	*name_len = n;
	*value = v;
	*value_len = end - v;
	return 0;
}

int config_check_tenant(const char *s, const char **want)
{
	size_t n = strlen(s), i;

	*want = "a tenant id of 1 to 150 letters, digits and !-_.*'() other than '.' and '..'";
	if (!n || n > 150 || !strcmp(s, ".") || !strcmp(s, ".."))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("!-_.*'()", s[i]))
			return -EINVAL;
	return 0;
}

/* The authority (after the scheme, up to the path): [user[:password]@]host[:port], where host
 * is a name or address, or an IPv6 address in brackets. *why says what is wrong. */
static int check_authority(const char *s, size_t n, const char **why)
{
	const char *at = memrchr(s, '@', n), *host, *end = s + n, *port;
	size_t i;

	host = at ? at + 1 : s;
	*why = "an http:// or https:// URL with a host";
	if (host == end)
		return -EINVAL;
	if (*host == '[') {
		port = memchr(host, ']', end - host);
		*why = "an IPv6 address in brackets, like http://[::1]:4040";
		if (!port || port == host + 1 || (port + 1 < end && port[1] != ':'))
			return -EINVAL;
		/* Hex and ':' (and '.' for an embedded IPv4), or a zone id after "%25". */
		for (i = 1; host + i < port; i++)
			if (!isalnum((unsigned char)host[i]) && !strchr(":.%-_", host[i]))
				return -EINVAL;
		port++;
	} else {
		port = memchr(host, ':', end - host);
		port = port ? port : end;
		if (port == host || memchr(host, '[', port - host) ||
		    memchr(host, ']', port - host))
			return -EINVAL;
	}
	if (port == end)
		return 0;
	*why = "a port from 1 to 65535 after the host";
	for (i = 1, n = 0; port + i < end; i++) {
		if (!isdigit((unsigned char)port[i]) || n > 65535)
			return -EINVAL;
		n = n * 10 + (port[i] - '0');
	}
	return i > 1 && n >= 1 && n <= 65535 ? 0 : -EINVAL;
}

int config_check_url(const char *s, size_t *len, const char **want)
{
	size_t scheme, n;

	*want = "an http:// or https:// URL with a host and no query, fragment or spaces";
	if (!strncasecmp(s, "http://", 7))
		scheme = 7;
	else if (!strncasecmp(s, "https://", 8))
		scheme = 8;
	else
		return -EINVAL;
	if (!s[scheme] || strchr("/?#:", s[scheme]))
		return -EINVAL;
	for (n = 0; s[n]; n++)
		if ((unsigned char)s[n] <= 0x20 || s[n] == 0x7f || s[n] == '?' || s[n] == '#')
			return -EINVAL;
	if (check_authority(s + scheme, strcspn(s + scheme, "/"), want))
		return -EINVAL;
	/* "https://host/" and "https://host" are the same server; the uploader appends paths. */
	while (n > scheme && s[n - 1] == '/')
		n--;
	*len = n;
	return 0;
}

int config_check_text(const char *s, const char *forbidden)
{
	if (!*s)
		return -EINVAL;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || (forbidden && strchr(forbidden, *s)))
			return -EINVAL;
	return 0;
}
