/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CPython line tables (co_lnotab <= 3.9, co_linetable 3.10, location table 3.11+): which source
 * line an instruction offset belongs to. The table bytes come from another process and are
 * decoded with every read bounded by the given length. */
#ifndef SPANPROF_PYTHON_LINES_H
#define SPANPROF_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at lasti in a code object of CPython 3.<minor> whose line table is
 * tab[0..len) and first line firstlineno. lasti is what the frame holds: a byte offset for
 * minor <= 9, a 2-byte code-unit index from 3.10. Returns the line (>= 1), 0 when the table
 * says the instruction has no line, or -EINVAL when minor is unsupported, the table ends before
 * lasti or is malformed. */
int python_line_for(int minor, const uint8_t *tab, size_t len, int firstlineno, uint32_t lasti);

#endif /* SPANPROF_PYTHON_LINES_H */
