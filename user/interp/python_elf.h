/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What one ELF file (python3.X or libpython3.X.so) tells about the CPython it holds: its
 * version, where _PyRuntime sits, the interpreter loop's range. Read from the file with libelf
 * under elf_guard's caps: the file belongs to the profiled process and is untrusted. */
#ifndef SPANPROF_PYTHON_ELF_H
#define SPANPROF_PYTHON_ELF_H

#include <stdint.h>

#include "util/elf_layout.h"

struct python_elf {
	int major, minor, patch; /* from Py_Version, _Py_DebugOffsets or the file name */
	uint64_t runtime_vaddr; /* st_value of _PyRuntime */
	/* _PyEval_EvalFrameDefault [lo, hi) as file vaddrs, and the part GCC split off into
	 * _PyEval_EvalFrameDefault.cold (.symtab only); 0 if absent */
	uint64_t eval_lo, eval_hi, eval_cold_lo, eval_cold_hi;
	int has_debug_offsets; /* 3.13+: _PyRuntime starts with "xdebugpy" and a matching version */
	struct elf_loads loads; /* to place the file in memory (elf_loads_bias()) */
};

/* Reads fd (a regular file opened by the caller). name is the file's base name, used only
 * when the file has no Py_Version (3.8-3.10): "python3.9", "libpython3.9.so.1.0".
 * Returns 0, -ENOENT when the file has no _PyRuntime (not a CPython interpreter), -ENOEXEC
 * when no version can be found, or elf_guard's error. */
int python_elf_read(int fd, const char *name, struct python_elf *out);

/* Parses "python3.X[dm]" or "libpython3.X[...]" (any directory prefix) into minor. Returns 0 or
 * -EINVAL. */
int python_elf_name_version(const char *name, int *major, int *minor);

#endif /* SPANPROF_PYTHON_ELF_H */
