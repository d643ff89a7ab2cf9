// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process CRuby discovery: interpreter mapping, version, offsets, execution-context access. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interp/ruby_elf.h"
#include "interp/ruby_proc.h"

/* The main program's TLS block is module 1 of every thread's dtv (glibc, x86-64). */
#define EXEC_TLS_MODID 1
/* Module ids beyond this are not a loaded library's (glibc's dtv grows in small steps). */
#define MAX_TLS_MODID 4096
/* More symbols than a Ruby process interns: the candidate is not rb_symbols_t. */
#define MAX_SYMBOL_SERIAL (1u << 24)

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The mapping of a libruby*.so*, else of an executable named ruby*; NULL when none. */
static const struct proc_map *interpreter_map(const struct proc_maps *maps)
{
	const struct proc_map *exe = NULL;
	const char *base;
	size_t i;

	for (i = 0; i < maps->count; i++) {
		if (!maps->maps[i].inode)
			continue;
		base = base_name(maps->maps[i].path);
		if (!strncmp(base, "libruby", 7) && strstr(base, ".so"))
			return &maps->maps[i];
		if (!strncmp(base, "ruby", 4) && !exe)
			exe = &maps->maps[i];
	}
	return exe;
}

static int read_mem(const char *proc_root, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/mem", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return got == (ssize_t)len ? 0 : -EFAULT;
}

/* The TLS module id the dynamic linker wrote into the GOT slot at addr. */
static int read_modid(const char *proc_root, pid_t pid, uint64_t addr, uint64_t *modid)
{
	int err = read_mem(proc_root, pid, addr, modid, sizeof(*modid));

	if (err)
		return err;
	if (!*modid)
		return -EAGAIN;
	return *modid > MAX_TLS_MODID ? -EINVAL : 0;
}

/* How BPF reaches the thread's execution context: ruby_current_ec through the dtv (3.0+), or
 * the 2.x global. Returns 0, -ENOTSUP (out->file.remark set) or read_modid()'s error. */
static int set_ec_access(const char *proc_root, pid_t pid, const struct ruby_elf *re, uint64_t bias,
			 struct ruby_proc *out)
{
	uint64_t modid = EXEC_TLS_MODID;
	int err;

	if (re->has_tls_ec && (re->dtpmod_got || re->is_exec)) {
		if (re->dtpmod_got) {
			err = read_modid(proc_root, pid, re->dtpmod_got + bias, &modid);
			if (err)
				return err;
		}
		out->bpf.ec_mode = SPANPROF_RB_EC_TLS;
		out->bpf.tls_modid = modid;
		out->bpf.tls_offset = re->tls_ec_offset;
		return 0;
	}
	if (re->ec_ptr_vaddr && re->major == 2) {
		out->bpf.ec_mode = SPANPROF_RB_EC_GLOBAL;
		out->bpf.ec_addr = re->ec_ptr_vaddr + bias;
		return 0;
	}
	out->file.remark = re->has_tls_ec ? "ruby_current_ec is reached through TLS descriptors" :
					    "no exported execution-context variable";
	return -ENOTSUP;
}

/* Whether addr holds a live rb_symbols_t {u32 last_id; st_table *str_sym; VALUE ids; ...}: a
 * sane serial count, a table, and an Array of ID entries. */
static int is_global_symbols(const char *proc_root, pid_t pid, uint64_t addr)
{
	struct {
		uint32_t last_id, _pad;
		uint64_t str_sym, ids;
	} gs;
	uint64_t flags;

	if (!addr || read_mem(proc_root, pid, addr, &gs, sizeof(gs)) || !gs.last_id ||
	    gs.last_id > MAX_SYMBOL_SERIAL || !gs.str_sym || !gs.ids ||
	    read_mem(proc_root, pid, gs.ids, &flags, sizeof(flags)))
		return 0;
	return (flags & RUBY_T_MASK) == RUBY_T_ARRAY;
}

/* ruby_global_symbols (exported, or one of the guesses that checks out), else 0. */
static uint64_t find_global_symbols(const char *proc_root, pid_t pid, const struct ruby_elf *re,
				    uint64_t bias)
{
	int i;

	if (re->global_symbols)
		return is_global_symbols(proc_root, pid, re->global_symbols + bias) ?
			       re->global_symbols + bias :
			       0;
	for (i = 0; i < re->nguesses; i++)
		if (is_global_symbols(proc_root, pid, re->global_symbols_guess[i] + bias))
			return re->global_symbols_guess[i] + bias;
	return 0;
}

static int parse_file(int fd, const char *name, void *out)
{
	(void)name;
	return ruby_elf_read(fd, out);
}

static int ruby_proc_find(const char *proc_root, pid_t pid, const struct proc_maps *maps,
			  struct file_verdicts *verdicts, void *value)
{
	const struct proc_map *m = interpreter_map(maps);
	struct ruby_proc *out = value;
	struct ruby_elf re;
	uint64_t bias;
	int err;

	memset(out, 0, sizeof(*out));
	err = interp_file_read(proc_root, pid, m, &out->file, verdicts, parse_file, &re);
	if (!err)
		err = interp_file_place(&out->file, m, &re.loads, re.major, re.minor, re.patch,
					&bias);
	if (err)
		return err;
	if (re.exec_hi) {
		out->exec_lo = re.exec_lo + bias;
		out->exec_hi = re.exec_hi + bias;
	}
	out->global_symbols = find_global_symbols(proc_root, pid, &re, bias);
	out->off = ruby_offsets_for(re.major, re.minor);
	if (!out->off) {
		out->file.remark = "version not in the offsets table (2.7-3.4 are)";
		return 0;
	}
	out->bpf = out->off->bpf;
	err = set_ec_access(proc_root, pid, &re, bias, out);
	if (err == -ENOTSUP)
		out->off = NULL;
	if (err)
		return err == -ENOTSUP ? 0 : err;
	out->file.supported = 1;
	out->file.remark = out->off->tested ? NULL : "this version's offsets are untested";
	return 0;
}

const struct interp_kind ruby_interp = {
	.name = "CRuby",
	.value_size = sizeof(struct ruby_proc),
	.parsed_size = sizeof(struct ruby_elf),
	.find = ruby_proc_find,
};
