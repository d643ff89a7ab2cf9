// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* OpenTelemetry thread context discovery: process context (schema, key map) -> the module that
 * exports otel_thread_ctx_v1 -> how its TLS is reached, read from the GOT slots the dynamic
 * linker filled (x86-64; glibc and musl). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover/hook_open.h"
#include "discover/tctx_elf.h"
#include "discover/thread_ctx.h"
#include "util/clock.h"
#include "util/lru.h"

/* glibc and musl both keep the dtv pointer right after the thread pointer's self pointer. */
#define DTV_OFFSET 8
#define GLIBC_DTV_ENTRY 16 /* dtv_t: {void *val; void *to_free} */
#define MUSL_DTV_ENTRY 8 /* uintptr_t */
/* Module ids beyond this are not a loaded module's (both libcs count modules from 1). */
#define MAX_TLS_MODID 4096
/* An offset from the thread pointer to static TLS is negative and far below 4 GiB. */
#define MAX_STATIC_TLS (1ll << 32)

struct thread_ctx_files {
	struct lru lru;
	size_t max;
	thread_ctx_elf_fn read; /* NULL: tctx_elf_read() here */
	void *read_ctx;
};

struct no_symbol {
	struct lru_node node; /* k1: device, k2: inode */
};

struct thread_ctx_files *thread_ctx_files_new(size_t max_files)
{
	struct thread_ctx_files *f = calloc(1, sizeof(*f));

	if (!f || lru_init(&f->lru, max_files)) {
		free(f);
		return NULL;
	}
	f->max = max_files;
	return f;
}

void thread_ctx_files_set_reader(struct thread_ctx_files *f, thread_ctx_elf_fn read, void *ctx)
{
	f->read = read;
	f->read_ctx = ctx;
}

static int read_module(struct thread_ctx_files *f, int fd, const char *path, struct tctx_elf *out)
{
	return f->read ? f->read(f->read_ctx, fd, path, out) : tctx_elf_read(fd, out);
}

void thread_ctx_files_free(struct thread_ctx_files *f)
{
	struct lru_node *n;

	if (!f)
		return;
	while ((n = lru_oldest(&f->lru))) {
		lru_del(&f->lru, n);
		free(lru_entry(n, struct no_symbol, node));
	}
	lru_release(&f->lru);
	free(f);
}

static int known_without(struct thread_ctx_files *f, const struct proc_map *m)
{
	struct lru_node *n = lru_find(&f->lru, m->dev, m->inode);

	if (n)
		lru_touch(&f->lru, n);
	return n != NULL;
}

/* Remembers a file without the variable; the least recently met goes when max are kept. */
static void note_without(struct thread_ctx_files *f, const struct proc_map *m)
{
	struct lru_node *old;
	struct no_symbol *e;

	if (f->lru.count >= f->max && (old = lru_oldest(&f->lru))) {
		lru_del(&f->lru, old);
		free(lru_entry(old, struct no_symbol, node));
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->node.k1 = m->dev;
	e->node.k2 = m->inode;
	lru_add(&f->lru, &e->node);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* musl's loader and libc are one file: ld-musl-<arch>.so.1, libc.musl-<arch>.so.1 (Alpine), or
 * a libc.so under a musl directory (Debian's /usr/lib/x86_64-linux-musl/libc.so, which its
 * ld-musl link names). */
static int is_musl(const struct proc_maps *maps)
{
	const char *path, *base;
	size_t i;

	for (i = 0; i < maps->count; i++) {
		path = maps->maps[i].path;
		base = base_name(path);
		if (!strncmp(base, "ld-musl", 7) || !strncmp(base, "libc.musl", 9) ||
		    (!strncmp(base, "libc.so", 7) && strstr(path, "musl")))
			return 1;
	}
	return 0;
}

static int read_mem(int memfd, uint64_t addr, void *buf, size_t len)
{
	ssize_t got = pread(memfd, buf, len, (off_t)addr);

	return got == (ssize_t)len ? 0 : -EFAULT;
}

static int is_executable(const char *proc_root, pid_t pid, const struct proc_map *m)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/exe", proc_root, (int)pid);
	return !stat(path, &st) && (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->inode;
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) & ~(align - 1);
}

static int set_dtv(struct tctx_proc *out, uint64_t modid, uint64_t offset, int musl)
{
	if (!modid)
		return -EAGAIN; /* not relocated yet */
	if (modid > MAX_TLS_MODID)
		return -EINVAL;
	out->tls = SPANPROF_TCTX_TLS_DTV;
	out->modid = modid;
	out->offset = offset;
	out->dtv_off = DTV_OFFSET;
	out->dtv_entry = musl ? MUSL_DTV_ENTRY : GLIBC_DTV_ENTRY;
	return 0;
}

static int set_static(struct tctx_proc *out, int64_t tp_offset)
{
	if (tp_offset >= 0 || tp_offset < -MAX_STATIC_TLS)
		return tp_offset ? -EINVAL : -EAGAIN;
	out->tls = SPANPROF_TCTX_TLS_STATIC;
	out->tp_offset = tp_offset;
	return 0;
}

/* A TLS descriptor {resolver, argument}: the argument is the offset from the thread pointer
 * when the module's TLS is static, else a pointer to {module id, offset}. */
static int from_tlsdesc(int memfd, uint64_t got, struct tctx_proc *out, int musl)
{
	uint64_t desc[2], arg[2];
	int err = read_mem(memfd, got, desc, sizeof(desc));

	if (err)
		return err;
	if (!desc[0])
		return -EAGAIN;
	if ((int64_t)desc[1] < 0)
		return set_static(out, (int64_t)desc[1]);
	err = read_mem(memfd, desc[1], arg, sizeof(arg));
	/* A descriptor still waiting for lazy binding points at its relocation: no module id. */
	if (err || !arg[0] || arg[0] > MAX_TLS_MODID)
		return -EAGAIN;
	return set_dtv(out, arg[0], arg[1], musl);
}

/* How the module mapped with load bias `bias` reaches its TLS, from the slots the dynamic
 * linker wrote (preferred in the order: offset from the thread pointer, descriptor, module id). */
static int resolve_tls(int memfd, const struct tctx_elf *te, uint64_t bias, int exe, int musl,
		       struct tctx_proc *out, const char **why)
{
	uint64_t v = 0, off = te->sym_offset;
	int err;

	if (te->tpoff_got) {
		err = read_mem(memfd, te->tpoff_got + bias, &v, sizeof(v));
		return err ?: set_static(out, (int64_t)v);
	}
	if (te->tlsdesc_got)
		return from_tlsdesc(memfd, te->tlsdesc_got + bias, out, musl);
	if (te->dtpmod_got) {
		err = read_mem(memfd, te->dtpmod_got + bias, &v, sizeof(v));
		if (!err && te->dtpoff_got)
			err = read_mem(memfd, te->dtpoff_got + bias, &off, sizeof(off));
		return err ?: set_dtv(out, v, off, musl);
	}
	if (exe) {
		/* The executable's block is module 1, right below the thread pointer (glibc) when
		 * its segment is aligned; musl's layout is read through the dtv. */
		if (musl || (te->tls_vaddr & (te->tls_align - 1)))
			return set_dtv(out, 1, off, musl);
		return set_static(out,
				  (int64_t)off - (int64_t)round_up(te->tls_memsz, te->tls_align));
	}
	*why = "the module exporting otel_thread_ctx_v1 has no TLS relocation to learn its module id from";
	return -ENOTSUP;
}

/* m's module (which exports the variable, read into te) resolved into out. */
static int resolve_module(const char *proc_root, pid_t pid, const struct proc_maps *maps,
			  const struct proc_map *m, const struct tctx_elf *te,
			  struct tctx_proc *out, const char **why)
{
	char path[64];
	uint64_t bias;
	int memfd, err;

	if (elf_loads_bias(&te->loads, m->start, m->offset, &bias)) {
		*why = "the module exporting otel_thread_ctx_v1 is mapped unlike its headers";
		return -ENOTSUP;
	}
	snprintf(path, sizeof(path), "%s/%d/mem", proc_root, (int)pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (memfd < 0)
		return -errno;
	err = resolve_tls(memfd, te, bias, is_executable(proc_root, pid, m), is_musl(maps), out,
			  why);
	close(memfd);
	return err;
}

/* The first module among maps that exports the variable, resolved into out. spanprof's own
 * hook library exports it too, but the agent reads its records through the slot the hook
 * registers per thread: another module (an SDK in the same process) comes first, and the hook
 * library is resolved only when no other module exports the variable, and no file whose parse
 * was put off (by the reader) may still turn out to be such a module. */
static int find_module(struct thread_ctx_files *files, const char *proc_root, pid_t pid,
		       const struct proc_maps *maps, uint64_t deadline_ns, struct tctx_proc *out,
		       const char **why)
{
	uint64_t seen_dev[THREAD_CTX_MAX_FILES], seen_ino[THREAD_CTX_MAX_FILES];
	const struct proc_map *hook_map = NULL;
	struct tctx_elf te, hook_te;
	size_t i, j, nseen = 0;
	int fd, err, busy = 0;

	for (i = 0; i < maps->count && nseen < THREAD_CTX_MAX_FILES; i++) {
		const struct proc_map *m = &maps->maps[i];

		if (!m->inode || m->path[0] != '/' || known_without(files, m))
			continue;
		for (j = 0; j < nseen; j++)
			if (seen_dev[j] == m->dev && seen_ino[j] == m->inode)
				break;
		if (j < nseen)
			continue;
		/* A file not parsed yet: only within the caller's time (each parse is bounded by
		 * the section caps; the files already parsed are remembered, so a retry goes on
		 * from here). */
		if (deadline_ns != UINT64_MAX && clock_mono_ns() >= deadline_ns)
			return -EINPROGRESS;
		seen_dev[nseen] = m->dev;
		seen_ino[nseen++] = m->inode;
		fd = hook_open_mapping(proc_root, pid, m, NULL);
		if (fd < 0)
			continue;
		/* The hook library is told by the function it exports, from the .dynsym walk: its
		 * probe note is parsed off the run loop (hook_parser.h), never here. */
		err = read_module(files, fd, m->path, &te);
		close(fd);
		if (err == -ENOENT || err == -ENOEXEC || err == -EFBIG)
			note_without(files, m); /* not parsed again: refusals included */
		busy |= err == -EBUSY;
		if (err)
			continue;
		if (!te.span_hook)
			return resolve_module(proc_root, pid, maps, m, &te, out, why);
		if (!hook_map) {
			hook_map = m;
			hook_te = te;
		}
	}
	if (busy)
		return -EINPROGRESS;
	if (hook_map)
		return resolve_module(proc_root, pid, maps, hook_map, &hook_te, out, why);
	return -ENOENT;
}

static uint16_t key_index(const struct process_ctx *ctx, const char *name)
{
	uint16_t i;

	for (i = 0; i < ctx->nkeys; i++)
		if (!strcmp(ctx->key_names + ctx->key_at[i], name))
			return i;
	return SPANPROF_TCTX_NO_KEY;
}

void thread_ctx_set_keys(const struct process_ctx *ctx, const struct thread_ctx_labels *labels,
			 struct tctx_proc *out)
{
	size_t i;

	out->nkeys = ctx->nkeys;
	out->root_key = key_index(ctx, THREAD_CTX_ROOT_KEY);
	if (out->root_key == SPANPROF_TCTX_NO_KEY)
		out->root_key = key_index(ctx, THREAD_CTX_ROOT_KEY_DATADOG);
	out->name_key = key_index(ctx, THREAD_CTX_NAME_KEY);
	for (i = 0; i < SPANPROF_TCTX_MAX_LABELS; i++)
		out->label_keys[i] =
			i < labels->n ? key_index(ctx, labels->names[i]) : SPANPROF_TCTX_NO_KEY;
	out->rescan = 0;
}

static int schema_known(const char *schema)
{
	return !strcmp(schema, THREAD_CTX_SCHEMA_DEV) || !strcmp(schema, THREAD_CTX_SCHEMA);
}

int thread_ctx_reread_keys(const char *proc_root, pid_t pid, const struct thread_ctx_labels *labels,
			   struct tctx_proc *out)
{
	struct process_ctx *ctx = malloc(sizeof(*ctx));
	int err;

	if (!ctx)
		return -ENOMEM;
	err = process_ctx_read(proc_root, pid, ctx);
	if (!err)
		thread_ctx_set_keys(ctx, labels, out);
	free(ctx);
	return err;
}

int thread_ctx_find(struct thread_ctx_files *files, const char *proc_root, pid_t pid,
		    const struct proc_maps *maps, const struct thread_ctx_labels *labels,
		    uint64_t deadline_ns, struct tctx_proc *out, const char **why)
{
	struct process_ctx *ctx;
	int err;

	*why = NULL;
	memset(out, 0, sizeof(*out));
	err = find_module(files, proc_root, pid, maps, deadline_ns, out, why);
	if (err)
		return err;
	ctx = malloc(sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	err = process_ctx_read(proc_root, pid, ctx);
	/* The variable is there: the SDK may publish its process context a little later. */
	if (err == -ENOENT || err == -EAGAIN)
		err = -EAGAIN;
	else if (err == -EBADMSG || err == -EMSGSIZE)
		err = -ENOENT; /* proc_table reports a broken process context */
	/* No thread-local schema, or Go's pprof labels (read by the Go support): nothing here. */
	if (!err && (!ctx->tls_schema[0] || !strcmp(ctx->tls_schema, "go_pprof_labels_v1")))
		err = -EAGAIN;
	if (!err && !schema_known(ctx->tls_schema)) {
		*why = "its threadlocal.schema_version is not tlsdesc_v1_dev nor tls_v1";
		err = -ENOTSUP;
	}
	if (!err)
		thread_ctx_set_keys(ctx, labels, out);
	free(ctx);
	return err;
}
