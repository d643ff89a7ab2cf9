// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds CPython's version, _PyRuntime and the eval loop in an untrusted ELF file (libelf). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interp/interp_file.h"
#include "interp/python_elf.h"
#include "util/elf_layout.h"

#define DEBUG_COOKIE "xdebugpy"

/* The symbols read, each the first of its name; the first marks a CPython (interp_elf_begin()). */
enum { SYM_RUNTIME, SYM_VERSION, SYM_EVAL, SYM_EVAL_COLD, SYM_COUNT };

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
	struct elf_wanted_sym w[SYM_COUNT] = {
		[SYM_RUNTIME] = { .name = "_PyRuntime" },
		[SYM_VERSION] = { .name = "Py_Version" },
		[SYM_EVAL] = { .name = "_PyEval_EvalFrameDefault" },
		[SYM_EVAL_COLD] = { .name = "_PyEval_EvalFrameDefault.cold" },
	};
	const GElf_Sym *eval = &w[SYM_EVAL].sym, *cold = &w[SYM_EVAL_COLD].sym;
	const GElf_Sym *version = &w[SYM_VERSION].sym;
	uint64_t hex = 0;
	Elf *elf;
	int err = 0;

	memset(out, 0, sizeof(*out));
	elf = interp_elf_begin(fd, w, SYM_COUNT, NULL, NULL);
	if (!elf)
		return -errno;
	out->runtime_vaddr = w[SYM_RUNTIME].sym.st_value;
	elf_loads_read(elf, &out->loads);
	if (w[SYM_EVAL].found) {
		out->eval_lo = eval->st_value;
		out->eval_hi = eval->st_value + eval->st_size;
	}
	if (w[SYM_EVAL].found && w[SYM_EVAL_COLD].found) {
		out->eval_cold_lo = cold->st_value;
		out->eval_cold_hi = cold->st_value + cold->st_size;
	}
	if (w[SYM_VERSION].found && version->st_size >= 4 &&
	    !elf_read_vaddr(elf, fd, version->st_value, &hex, 4))
		set_version_hex(out, hex);
	read_debug_offsets(elf, fd, out);
	if (!out->major && python_elf_name_version(name, &out->major, &out->minor))
		err = -ENOEXEC;
	elf_end(elf);
	return err;
}
