// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Separate debug file lookup for libdwfl: build-id tree first, then .gnu_debuglink locations. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "symbolize/elf_debug.h"
#include "util/elf_guard.h"
#include "util/log.h"
#include "util/proc_file.h"

/* Accepts a candidate when it is an ELF file whose build id matches the module's and whose
 * DWARF fits the limit. */
static int candidate_matches(struct elf_debug_ctx *ctx, int fd, const unsigned char *id, int id_len)
{
	const void *cand_id = NULL;
	ssize_t cand_len;
	size_t dwarf;
	int ok = 0;
	Elf *elf;

	elf = elf_guard_begin(fd);
	if (!elf)
		return 0;
	if (id_len > 0) {
		cand_len = dwelf_elf_gnu_build_id(elf, &cand_id);
		if (cand_len != id_len || memcmp(cand_id, id, id_len))
			goto out_end; /* without an id to compare, trust the debuglink name */
	}
	dwarf = elf_guard_dwarf_bytes(elf, fd);
	ctx->debug_dwarf_bytes = dwarf;
	ok = !ctx->dwarf_limit || dwarf <= ctx->dwarf_limit;
	if (!ok)
		ctx->refused_big = 1;
out_end:
	elf_end(elf);
	return ok;
}

/* Opens path (resolved inside root when root is not NULL or empty) if it is a matching debug
 * file; returns the fd (path copied out) or -1. root != NULL marks a place a process controls
 * (next to its executable): such a file is handed over as a private copy, because libdwfl maps
 * what it gets and the process could truncate the original under the mapping. */
static int try_candidate(struct elf_debug_ctx *ctx, const char *root, const char *path,
			 const unsigned char *id, int id_len, char **found)
{
	char full[PATH_MAX];
	int fd, copy;

	fd = proc_file_open(root, path, 0, NULL);
	snprintf(full, sizeof(full), "%s%s", root ? root : "", path);
	if (fd < 0)
		return -1;
	if (!candidate_matches(ctx, fd, id, id_len)) {
		log_debug("debug file %s does not match its module or is too large, ignored", full);
		close(fd);
		return -1;
	}
	if (root) {
		copy = elf_guard_private_copy(fd, ELF_DEBUG_MAX_COPY);
		close(fd);
		if (copy < 0)
			return -1;
		fd = copy;
	}
	*found = strdup(full);
	if (!*found) {
		close(fd);
		return -1;
	}
	return fd;
}

static int by_build_id(struct elf_debug_ctx *ctx, const unsigned char *id, int id_len, char **found)
{
	char path[PATH_MAX];
	size_t n;
	int i;

	if (!ctx->debug_root || id_len < 2)
		return -1;
	n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", ctx->debug_root, id[0]);
	for (i = 1; i < id_len && n + 3 < sizeof(path); i++)
		n += snprintf(path + n, sizeof(path) - n, "%02x", id[i]);
	if (n + sizeof(".debug") > sizeof(path))
		return -1;
	strcpy(path + n, ".debug");
	return try_candidate(ctx, NULL, path, id, id_len, found);
}

static int by_debuglink(struct elf_debug_ctx *ctx, const char *link, const unsigned char *id,
			int id_len, char **found)
{
	const char *slash = strrchr(ctx->path, '/');
	int dir_len = slash ? (int)(slash - ctx->path) : 0;
	const char *root = ctx->root ? ctx->root : "";
	char path[PATH_MAX];
	int fd = -1;

	if (strchr(link, '/'))
		return -1; /* a debuglink is a bare file name; anything else is malformed */
	snprintf(path, sizeof(path), "%.*s/%s", dir_len, ctx->path, link);
	if (strcmp(path, ctx->path)) /* never the module itself */
		fd = try_candidate(ctx, root, path, id, id_len, found);
	if (fd < 0) {
		snprintf(path, sizeof(path), "%.*s/.debug/%s", dir_len, ctx->path, link);
		fd = try_candidate(ctx, root, path, id, id_len, found);
	}
	if (fd < 0 && ctx->debug_root) {
		snprintf(path, sizeof(path), "%s%.*s/%s", ctx->debug_root, dir_len, ctx->path,
			 link);
		fd = try_candidate(ctx, NULL, path, id, id_len, found);
	}
	return fd;
}

/* Finds the debug file of a module with build id (id, id_len) and .gnu_debuglink `link` (NULL:
 * none). Returns an fd (*found set) or -1. */
static int find(struct elf_debug_ctx *ctx, const unsigned char *id, int id_len, const char *link,
		char **found)
{
	int fd = by_build_id(ctx, id, id_len, found);

	if (fd < 0 && link)
		fd = by_debuglink(ctx, link, id, id_len, found);
	return fd;
}

int elf_debug_prefind(struct elf_debug_ctx *ctx, Elf *main)
{
	const void *id = NULL;
	const char *link;
	GElf_Word crc;
	ssize_t id_len;

	if (!ctx->path || ctx->found_fd >= 0)
		return ctx->found_fd >= 0;
	id_len = dwelf_elf_gnu_build_id(main, &id);
	link = dwelf_elf_gnu_debuglink(main, &crc);
	ctx->found_fd = find(ctx, id, id_len > 0 ? (int)id_len : 0, link, &ctx->found_name);
	ctx->prefound = 1;
	return ctx->found_fd >= 0;
}

void elf_debug_release(struct elf_debug_ctx *ctx)
{
	if (ctx->found_fd >= 0)
		close(ctx->found_fd);
	ctx->found_fd = -1;
	free(ctx->found_name);
	ctx->found_name = NULL;
}

int elf_debug_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	struct elf_debug_ctx *ctx = userdata ? *userdata : NULL;
	const unsigned char *id = NULL;
	GElf_Addr id_vaddr;
	int id_len, fd = -1;

	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_crc; /* the build id comparison is stronger than the CRC */
	if (!ctx || !ctx->path) {
		errno = ENOENT;
		return -1;
	}
	if (ctx->prefound) { /* looked for at open: hand that over, once */
		fd = ctx->found_fd;
		*debuginfo_file_name = ctx->found_name;
		ctx->found_fd = -1;
		ctx->found_name = NULL;
	} else {
		id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
		fd = find(ctx, id, id_len, debuglink_file, debuginfo_file_name);
	}
	if (fd < 0)
		errno = ENOENT;
	return fd;
}
