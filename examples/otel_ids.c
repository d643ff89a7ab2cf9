// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Example: a C tracer hands spanprof the OpenTelemetry ids it already has as hex text, using the
 * header-only helper hooks/c/spanprof_otel.h. Usage: otel_ids [TRACE_ID SPAN_ID [ROOT_ID [NAME]]]
 *
 *   cc -Iinclude -Ihooks/c examples/otel_ids.c -Lbuild -lspanprof -Wl,-rpath,$PWD/build \
 *      -o otel_ids && ./otel_ids 4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7
 */
#include <stdio.h>

#include "spanprof.h"
#include "spanprof_otel.h"

static volatile unsigned long sink;

static void print_hex(const char *label, const uint8_t *id, size_t n)
{
	printf("%s=", label);
	for (size_t i = 0; i < n; i++)
		printf("%02x", id[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	/* Ids as a W3C traceparent header carries them; a child span of a local root here. */
	const char *trace_id = argc > 2 ? argv[1] : "4bf92f3577b34da6a3ce929d0e0e4736";
	const char *span_id = argc > 2 ? argv[2] : "00f067aa0ba902b7";
	const char *root_id = argc > 3 ? argv[3] : NULL;
	const char *name = argc > 4 ? argv[4] : "GET /checkout";
	struct spanprof_span span;

	if (spanprof_otel_span_init(&span, trace_id, span_id, root_id, name)) {
		fprintf(stderr, "otel_ids: bad id: trace %s span %s root %s\n", trace_id, span_id,
			root_id ? root_id : "(own)");
		return 2;
	}
	print_hex("trace_id", span.trace_id, sizeof(span.trace_id));
	print_hex("span_id", span.span_id, sizeof(span.span_id));
	print_hex("root_span_id", span.root_span_id, sizeof(span.root_span_id));
	printf("name=%s\n", span.name);
	printf("agent=%s\n", spanprof_active() ? "attached" : "none");

	spanprof_span_set(&span); /* the span is active on this thread from here */
	for (int i = 0; i < 1000000; i++)
		sink += i;
	spanprof_span_set(NULL); /* and no longer */
	return 0;
}
