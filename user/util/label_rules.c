// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Series label rules: name characters and length, reserved names, value length and UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "util/label_rules.h"
#include "util/utf8.h"

/* Series labels spanprof sets itself, per process or per sample. */
static const char *const reserved_labels[] = { "service_name", "span_id", "trace_id", "span_name" };

int label_name_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i;
	char x, y;

	if (na != nb)
		return na < nb ? -1 : 1;
	for (i = 0; i < na; i++) {
		x = a[i] == '.' ? '_' : a[i];
		y = b[i] == '.' ? '_' : b[i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static int name_chars_ok(const char *s, size_t n)
{
	char *copy;
	size_t i;
	int ok;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == ',')
			return 0;
	copy = strndup(s, n);
	ok = copy && utf8_valid(copy);
	free(copy);
	return ok;
}

static const char *check_name(const char *name, size_t n)
{
	size_t i;

	if (!n)
		return "a non-empty label name";
	if (n > LABEL_NAME_MAX)
		return "a label name of at most 1024 bytes";
	if (!name_chars_ok(name, n))
		return "a label name of UTF-8 without control characters or ','";
	if (n >= 2 && name[0] == '_' && name[1] == '_')
		return "a label name that does not start with '__' (reserved)";
	for (i = 0; i < sizeof(reserved_labels) / sizeof(reserved_labels[0]); i++)
		if (!label_name_cmp(name, n, reserved_labels[i], strlen(reserved_labels[i])))
			return "a label name other than service_name, span_id, trace_id and "
			       "span_name (spanprof sets them; the server reads '.' as '_')";
	return NULL;
}

const char *label_rules_check(const char *name, size_t name_len, const char *value)
{
	const char *why = check_name(name, name_len);

	if (why)
		return why;
	if (!value || !*value || strlen(value) > LABEL_VALUE_MAX || !utf8_valid(value))
		return "a non-empty label value of at most 2048 bytes of UTF-8";
	return NULL;
}
