/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What a libruby that no longer exports it (Ruby 3.3+, as Debian builds it) still shows in the
 * code of functions it does export: where ruby_current_ec lives (rb_errinfo reads it first) and
 * the VM loop rb_vm_exec (rb_iseq_eval_main ends with a tail jump into it). Every candidate is
 * checked against the file's relocations, TLS segment or CFI before it is used. */
#ifndef SPANPROF_RUBY_ELF_HIDDEN_H
#define SPANPROF_RUBY_ELF_HIDDEN_H

#include <gelf.h>
#include <libelf.h>

#include "interp/ruby_elf.h"

/* From the general-dynamic TLS access at the start of errinfo (rb_errinfo's symbol): sets
 * out->has_tls_ec, tls_ec_offset and dtpmod_got. Returns 0, or -ENOENT when the code is not the
 * expected sequence or the slot does not check out. */
int ruby_elf_ec_from_code(Elf *elf, int fd, const GElf_Sym *errinfo, struct ruby_elf *out);

/* From eval_main's (rb_iseq_eval_main's) tail jump out of itself: sets out->exec_lo/exec_hi to
 * the .eh_frame FDE that starts at its target. Returns 0 or -ENOENT. */
int ruby_elf_exec_from_code(Elf *elf, int fd, const GElf_Sym *eval_main, struct ruby_elf *out);

#endif /* SPANPROF_RUBY_ELF_HIDDEN_H */
