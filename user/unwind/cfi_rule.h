/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Classifies one libdw CFI frame state (a Dwarf_Frame) into the unwinder's compact rule:
 * CFA = rsp|rbp + offset, the .plt expression, a signal frame, the outermost frame, or
 * "cannot unwind here". */
#ifndef SPANPROF_CFI_RULE_H
#define SPANPROF_CFI_RULE_H

#include <stdbool.h>

#include <elfutils/libdw.h>
#include <linux/types.h>

#include "spanprof_abi.h"

/* Fills *r for frame fr (signalp and ra_reg as dwarf_frame_info() reported them). */
void cfi_rule_decode(Dwarf_Frame *fr, bool signalp, int ra_reg, struct spanprof_unwind_rule *r);

/* Whether two rules unwind the same way. */
bool cfi_rule_equal(const struct spanprof_unwind_rule *a, const struct spanprof_unwind_rule *b);

#endif /* SPANPROF_CFI_RULE_H */
