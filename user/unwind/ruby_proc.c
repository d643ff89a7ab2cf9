// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process CRuby discovery: interpreter mapping, version, offsets, execution-context access. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "unwind/ruby_elf.h"
#include "unwind/ruby_proc.h"
#include "util/proc_file.h"

/* The main program's TLS block is module 1 of every thread's dtv (glibc, x86-64). */
#define EXEC_TLS_MODID 1
/* Module ids beyond this are not a loaded library's (glibc's dtv grows in small steps). */
#define MAX_TLS_MODID 4096

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

static int read_interpreter(const char *proc_root, pid_t pid, const struct proc_map *m,
			    struct ruby_elf *re)
{
	char path[96];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 m->start, m->end);
	fd = proc_file_open(NULL, path, PROC_FILE_MAGIC_LINK, NULL);
	if (fd < 0)
		return fd;
	err = ruby_elf_read(fd, re);
	close(fd);
	return err;
}

/* The TLS module id the dynamic linker wrote into the GOT slot at addr. */
static int read_modid(const char *proc_root, pid_t pid, uint64_t addr, uint64_t *modid)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/mem", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, modid, sizeof(*modid), (off_t)addr);
	close(fd);
	if (got != (ssize_t)sizeof(*modid))
		return -EFAULT;
	if (!*modid)
		return -EAGAIN;
	return *modid > MAX_TLS_MODID ? -EINVAL : 0;
}

/* How BPF reaches the thread's execution context: ruby_current_ec through the dtv (3.0+), or
 * the 2.x global. Returns 0, -ENOTSUP (out->why set) or read_modid()'s error. */
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
	out->why = re->has_tls_ec ? "ruby_current_ec is reached through TLS descriptors" :
				    "no exported execution-context variable";
	return -ENOTSUP;
}

int ruby_proc_find(const char *proc_root, pid_t pid, const struct proc_maps *maps,
		   struct ruby_proc *out)
{
	const struct proc_map *m = interpreter_map(maps);
	struct ruby_elf re;
	uint64_t bias;
	int err;

	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOENT;
	snprintf(out->path, sizeof(out->path), "%s", m->path);
	out->dev = m->dev;
	out->inode = m->inode;
	err = read_interpreter(proc_root, pid, m, &re);
	if (err)
		return err;
	if (ruby_elf_bias(&re, m->start, m->offset, &bias))
		return -ENOEXEC;
	out->major = re.major;
	out->minor = re.minor;
	out->patch = re.patch;
	if (re.exec_hi) {
		out->exec_lo = re.exec_lo + bias;
		out->exec_hi = re.exec_hi + bias;
	}
	if (re.global_symbols)
		out->global_symbols = re.global_symbols + bias;
	out->off = ruby_offsets_for(re.major, re.minor);
	if (!out->off) {
		out->why = "version not in the offsets table (2.7-3.4 are)";
		return 0;
	}
	out->bpf = out->off->bpf;
	err = set_ec_access(proc_root, pid, &re, bias, out);
	if (err == -ENOTSUP)
		out->off = NULL;
	return err == -ENOTSUP ? 0 : err;
}
