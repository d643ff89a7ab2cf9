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
#include "util/log.h"

/* Accepts a candidate when it is an ELF file whose build id matches the module's. */
static int candidate_matches(int fd, const unsigned char *id, int id_len)
{
	const void *cand_id = NULL;
	ssize_t cand_len;
	int ok = 0;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	if (elf_kind(elf) != ELF_K_ELF)
		goto out_end;
	if (id_len <= 0) {
		ok = 1; /* nothing to compare: trust the debuglink name */
		goto out_end;
	}
	cand_len = dwelf_elf_gnu_build_id(elf, &cand_id);
	ok = cand_len == id_len && !memcmp(cand_id, id, id_len);
out_end:
	elf_end(elf);
	return ok;
}

/* Opens path if it is a matching debug file; returns the fd (path copied out) or -1. */
static int try_candidate(const char *path, const unsigned char *id, int id_len, char **found)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!candidate_matches(fd, id, id_len)) {
		log_debug("debug file %s does not match its module, ignored", path);
		close(fd);
		return -1;
	}
	*found = strdup(path);
	if (!*found) {
		close(fd);
		return -1;
	}
	return fd;
}

static int by_build_id(const struct elf_debug_ctx *ctx, const unsigned char *id, int id_len,
		       char **found)
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
	return try_candidate(path, id, id_len, found);
}

static int by_debuglink(const struct elf_debug_ctx *ctx, const char *link,
			const unsigned char *id, int id_len, char **found)
{
	const char *slash = strrchr(ctx->path, '/');
	int dir_len = slash ? (int)(slash - ctx->path) : 0;
	const char *root = ctx->root ? ctx->root : "";
	char path[PATH_MAX];
	int fd = -1;

	if (strchr(link, '/'))
		return -1; /* a debuglink is a bare file name; anything else is malformed */
	snprintf(path, sizeof(path), "%s%.*s/%s", root, dir_len, ctx->path, link);
	if (strcmp(path + strlen(root), ctx->path)) /* never the module itself */
		fd = try_candidate(path, id, id_len, found);
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s%.*s/.debug/%s", root, dir_len, ctx->path, link);
		fd = try_candidate(path, id, id_len, found);
	}
	if (fd < 0 && ctx->debug_root) {
		snprintf(path, sizeof(path), "%s%.*s/%s", ctx->debug_root, dir_len, ctx->path,
			 link);
		fd = try_candidate(path, id, id_len, found);
	}
	return fd;
}

int elf_debug_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	const struct elf_debug_ctx *ctx = userdata ? *userdata : NULL;
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
	id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
	fd = by_build_id(ctx, id, id_len, debuginfo_file_name);
	if (fd < 0 && debuglink_file)
		fd = by_debuglink(ctx, debuglink_file, id, id_len, debuginfo_file_name);
	if (fd < 0)
		errno = ENOENT;
	return fd;
}
