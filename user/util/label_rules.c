// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Series label rules: name characters and length, reserved names, value length and UTF-8. */
#include <string.h>

#include "util/label_rules.h"
#include "util/utf8.h"

/* Series labels spanprof sets itself, per process or per sample. */
static const char *const reserved_labels[] = { "service_name", "span_id", "trace_id", "span_name" };

static int is_name_char(char c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

static const char *check_name(const char *name, size_t n)
{
	size_t i;

	if (!n)
		return "a non-empty label name";
	for (i = 0; i < n; i++)
		if (!is_name_char(name[i], i == 0))
			return "a label name of letters, digits and '_' that does not start with "
			       "a digit";
	if (n > LABEL_NAME_MAX)
		return "a label name of at most 1024 bytes";
	if (n >= 2 && name[0] == '_' && name[1] == '_')
		return "a label name that does not start with '__' (reserved)";
	for (i = 0; i < sizeof(reserved_labels) / sizeof(reserved_labels[0]); i++)
		if (strlen(reserved_labels[i]) == n && !strncmp(name, reserved_labels[i], n))
			return "a label name other than service_name, span_id, trace_id and "
			       "span_name (spanprof sets them)";
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
