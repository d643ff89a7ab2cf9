/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Cleaning of text a process controls (service names, span names, function and file names),
 * done once where it enters the agent, so that no output can carry a newline, an escape
 * sequence or broken UTF-8 from it. */
#ifndef SPANPROF_TEXT_CLEAN_H
#define SPANPROF_TEXT_CLEAN_H

/* In place: every C0 control (including newline, tab and ESC), DEL, C1 control (U+0080 to
 * U+009F) and byte that does not start a valid UTF-8 sequence becomes '?'. The result is valid
 * UTF-8 and never longer than s. */
void text_clean(char *s);

#endif /* SPANPROF_TEXT_CLEAN_H */
