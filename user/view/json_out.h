/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* JSON text for the viewer's answers: strings escaped for JSON and for a browser. */
#ifndef SPANPROF_VIEW_JSON_OUT_H
#define SPANPROF_VIEW_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

/* Writes s as a JSON string, quotes included, escaped by json_escape(), which also escapes '<'
 * so that a "</script>" in a name cannot end the page's script. */
void json_out_str(FILE *f, const char *s);

/* Writes n bytes as a JSON string of lowercase hex digits. */
void json_out_hex(FILE *f, const uint8_t *b, size_t n);

#endif /* SPANPROF_VIEW_JSON_OUT_H */
