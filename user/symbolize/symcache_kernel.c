// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel frames for the symbol cache: lazy kallsyms, reloaded when /proc/modules changes. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "symbolize/symcache_kernel.h"
#include "util/clock.h"
#include "util/log.h"

/* Modules come and go rarely; comparing /proc/modules more often than this is wasted work. */
#define MODULES_RECHECK_NS (5 * NS_PER_S)

/* FNV-1a over each module's name and size: reference counts change, the symbols don't. */
static uint64_t modules_signature(const char *proc_root)
{
	char path[4096], name[256];
	uint64_t h = 0xcbf29ce484222325ull, size;
	char line[1024];
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s/modules", proc_root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %" SCNu64, name, &size) != 2)
			continue;
		for (i = 0; name[i]; i++)
			h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
		h = (h ^ size) * 0x100000001b3ull;
	}
	fclose(f);
	return h;
}

int symcache_kernel_init(struct symcache_kernel *kc, const char *kallsyms_path,
			 const char *proc_root)
{
	memset(kc, 0, sizeof(*kc));
	kc->kallsyms_path = kallsyms_path;
	kc->proc_root = proc_root;
	return 0;
}

void symcache_kernel_release(struct symcache_kernel *kc)
{
	if (!kc)
		return;
	ksyms_free(kc->ks);
	kc->ks = NULL;
}

/* Makes kc->ks current. Returns 0 when symbols are usable. */
static int refresh(struct symcache_kernel *kc)
{
	uint64_t now = clock_mono_ns(), sig;
	struct ksyms *ks;

	if (kc->checked_ns && now - kc->checked_ns < MODULES_RECHECK_NS)
		return kc->ks ? 0 : -ENOENT;
	kc->checked_ns = now;
	sig = modules_signature(kc->proc_root);
	if (kc->ks && sig == kc->modules_sig)
		return 0;
	ks = ksyms_new(kc->kallsyms_path);
	if (!ks) {
		int err = -errno;

		kc->errors++;
		if (err == -EACCES && !kc->unavailable)
			log_warn(0,
				 "kernel symbols unavailable: %s shows only zero addresses "
				 "(kptr_restrict?)",
				 kc->kallsyms_path);
		else if (!kc->unavailable)
			log_warn(err, "load %s", kc->kallsyms_path);
		kc->unavailable = 1;
		return kc->ks ? 0 : err; /* keep older symbols rather than none */
	}
	ksyms_free(kc->ks);
	kc->ks = ks;
	kc->modules_sig = sig;
	kc->unavailable = 0;
	return 0;
}

void symcache_kernel_resolve(struct symcache_kernel *kc, uint64_t addr, struct sym_frame *out)
{
	struct ksym sym;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->has_mapping = 1;
	out->mapping.path = "[kernel.kallsyms]";
	out->mapping.limit = UINT64_MAX;
	if (refresh(kc))
		return;
	if (!ksyms_find(kc->ks, addr, &sym))
		return;
	if (sym.module) {
		snprintf(kc->module, sizeof(kc->module), "[%s]", sym.module);
		out->mapping.path = kc->module;
	}
	snprintf(kc->name, sizeof(kc->name), "%s", sym.name); /* sym may hold it */
	out->nlines = 1;
	out->lines[0].function = kc->name;
}
