// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process CPython discovery: interpreter mapping, version, offsets, runtime addresses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interp/python_elf.h"
#include "interp/python_proc.h"

/* The Py_tss_t is {int _is_initialized; pthread_key_t _key;}: the key is the second int. */
#define TSS_KEY_IN_STRUCT 4

/* The mapping whose file name says python3.X or libpython3.X; libpython wins (the executable of
 * an --enable-shared build is only a stub). */
static const struct proc_map *interpreter_map(const struct proc_maps *maps)
{
	const struct proc_map *exe = NULL;
	const char *base;
	int maj, min;
	size_t i;

	for (i = 0; i < maps->count; i++) {
		if (!maps->maps[i].inode)
			continue;
		base = strrchr(maps->maps[i].path, '/');
		base = base ? base + 1 : maps->maps[i].path;
		if (python_elf_name_version(base, &maj, &min))
			continue;
		if (!strncmp(base, "lib", 3))
			return &maps->maps[i];
		if (!exe)
			exe = &maps->maps[i];
	}
	return exe;
}

static int parse_file(int fd, const char *name, void *out)
{
	return python_elf_read(fd, name, out);
}

static int python_proc_find(const char *proc_root, pid_t pid, const struct proc_maps *maps,
			    struct file_verdicts *verdicts, void *value)
{
	const struct proc_map *m = interpreter_map(maps);
	struct python_proc *out = value;
	struct python_elf pe;
	uint64_t bias;
	int err;

	memset(out, 0, sizeof(*out));
	err = interp_file_read(proc_root, pid, m, &out->file, verdicts, parse_file, &pe);
	if (!err)
		err = interp_file_place(&out->file, m, &pe.loads, pe.major, pe.minor, pe.patch,
					&bias);
	if (err)
		return err;
	if (pe.eval_hi) {
		out->eval_lo = pe.eval_lo + bias;
		out->eval_hi = pe.eval_hi + bias;
	}
	if (pe.eval_cold_hi) {
		out->eval_cold_lo = pe.eval_cold_lo + bias;
		out->eval_cold_hi = pe.eval_cold_hi + bias;
	}
	out->off = python_offsets_for(pe.major, pe.minor);
	out->file.remark = out->off ? NULL : "3.8-3.13 are";
	/* 3.13+ must carry the _Py_DebugOffsets our table was checked against. */
	if (out->off && pe.minor >= 13 && !pe.has_debug_offsets) {
		out->off = NULL;
		out->file.remark = "no _Py_DebugOffsets to check the offsets against";
	}
	if (!out->off)
		return 0;
	out->file.supported = 1;
	out->bpf = out->off->bpf;
	out->bpf.tss_key_addr =
		pe.runtime_vaddr + bias + out->off->runtime_tss_key + TSS_KEY_IN_STRUCT;
	return 0;
}

const struct interp_kind python_interp = {
	.name = "CPython",
	.value_size = sizeof(struct python_proc),
	.parsed_size = sizeof(struct python_elf),
	.find = python_proc_find,
};
