// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The bounded list of skipped files. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "view/problems.h"

int problems_has(const struct problems *pr, const char *file)
{
	size_t i;

	for (i = 0; i < pr->n; i++)
		if (!strncmp(pr->list[i].file, file, PROBLEM_FILE_MAX - 1))
			return 1;
	return 0;
}

void problems_add(struct problems *pr, const char *file, const char *fmt, ...)
{
	struct problem *p;
	va_list ap;

	if (problems_has(pr, file))
		return;
	pr->total++;
	if (pr->n == PROBLEMS_MAX)
		return;
	p = &pr->list[pr->n++];
	snprintf(p->file, sizeof(p->file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	log_warn(0, "view: skipped %s: %s", p->file, p->why);
}
