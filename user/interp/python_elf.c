// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds CPython's version, _PyRuntime and the eval loop in an untrusted ELF file (libelf). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interp/python_elf.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"

#define DEBUG_COOKIE "xdebugpy"

struct wanted_syms {
	GElf_Sym runtime, version, eval, eval_cold;
	int have_runtime, have_version, have_eval, have_eval_cold;
};

static void note_sym(struct wanted_syms *w, const char *name, const GElf_Sym *sym)
{
	if (!strcmp(name, "_PyRuntime") && !w->have_runtime) {
		w->runtime = *sym;
		w->have_runtime = 1;
	} else if (!strcmp(name, "Py_Version") && !w->have_version) {
		w->version = *sym;
		w->have_version = 1;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault") && !w->have_eval) {
		w->eval = *sym;
		w->have_eval = 1;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold") && !w->have_eval_cold) {
		w->eval_cold = *sym;
		w->have_eval_cold = 1;
	}
}

static void on_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	note_sym(ctx, name, sym);
}

static void set_version_hex(struct python_elf *out, uint64_t hex)
{
	out->major = (hex >> 24) & 0xff;
	out->minor = (hex >> 16) & 0xff;
	out->patch = (hex >> 8) & 0xff;
}

int python_elf_name_version(const char *name, int *major, int *minor)
{
	const char *base = strrchr(name, '/'), *rest;
	unsigned int maj, min;
	int used = 0, is_lib;

	base = base ? base + 1 : name;
	is_lib = !strncmp(base, "lib", 3);
	if (sscanf(base + (is_lib ? 3 : 0), "python%u.%u%n", &maj, &min, &used) != 2 || maj != 3 ||
	    min > 99)
		return -EINVAL;
	rest = base + (is_lib ? 3 : 0) + used;
	/* The library may end in anything (".so.1.0", "d.so"); the executable only in d, m, dm. */
	if (!is_lib && *rest && strcmp(rest, "d") && strcmp(rest, "m") && strcmp(rest, "dm"))
		return -EINVAL;
	if (is_lib && *rest && *rest != '.' && *rest != 'd' && *rest != 'm')
		return -EINVAL;
	*major = maj;
	*minor = min;
	return 0;
}

/* 3.13+: _PyRuntime begins with _Py_DebugOffsets {cookie[8], version}. */
static void read_debug_offsets(Elf *elf, int fd, struct python_elf *out)
{
	struct {
		char cookie[8];
		uint64_t version;
	} head;

	if (elf_read_vaddr(elf, fd, out->runtime_vaddr, &head, sizeof(head)) ||
	    memcmp(head.cookie, DEBUG_COOKIE, 8))
		return;
	out->has_debug_offsets = 1;
	if (!out->major)
		set_version_hex(out, head.version);
}

int python_elf_read(int fd, const char *name, struct python_elf *out)
{
	struct wanted_syms w = { 0 };
	uint64_t hex = 0;
	Elf *elf;
	int err = 0;

	memset(out, 0, sizeof(*out));
	elf = elf_guard_begin(fd);
	if (!elf)
		return -errno;
	elf_each_defined_symbol(elf, on_symbol, &w);
	if (!w.have_runtime) {
		err = -ENOENT;
		goto out;
	}
	out->runtime_vaddr = w.runtime.st_value;
	elf_loads_read(elf, &out->loads);
	if (w.have_eval) {
		out->eval_lo = w.eval.st_value;
		out->eval_hi = w.eval.st_value + w.eval.st_size;
	}
	if (w.have_eval && w.have_eval_cold) {
		out->eval_cold_lo = w.eval_cold.st_value;
		out->eval_cold_hi = w.eval_cold.st_value + w.eval_cold.st_size;
	}
	if (w.have_version && w.version.st_size >= 4 &&
	    !elf_read_vaddr(elf, fd, w.version.st_value, &hex, 4))
		set_version_hex(out, hex);
	read_debug_offsets(elf, fd, out);
	if (!out->major && python_elf_name_version(name, &out->major, &out->minor))
		err = -ENOEXEC;
out:
	elf_end(elf);
	return err;
}
