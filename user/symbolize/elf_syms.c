// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One ELF module through libdwfl: opening, build id, PT_LOAD translation and symbol lookup
 * (DWARF scopes for inlined frames, the symbol table otherwise). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbolize/elf_debug.h"
#include "symbolize/elf_syms.h"
#include "util/log.h"

#define ELF_SYMS_MAX_SEGS 16

/* Provided by libstdc++ (the Itanium C++ ABI); declared here to keep this a C file. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct elf_seg {
	uint64_t offset, filesz, vaddr, align;
};

struct elf_syms {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct elf_debug_ctx dbg; /* the module's userdata: read by elf_debug_find() */
	char *path, *root, *debug_root;
	char *build_id;
	char *debug_file;
	int has_dwarf; /* -1: not loaded yet */
	size_t bytes;
	struct elf_seg segs[ELF_SYMS_MAX_SEGS];
	int nsegs;
	char *demangled[ELF_SYMS_MAX_LINES]; /* names handed out by the last lookup */
};

/* Reporting passes an fd, so libdwfl never needs to find the main file itself. */
static int no_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;
}

static const Dwfl_Callbacks elf_syms_callbacks = {
	.find_elf = no_find_elf,
	.find_debuginfo = elf_debug_find,
	.section_address = dwfl_offline_section_address,
};

static int read_segments(struct elf_syms *es)
{
	GElf_Addr bias;
	GElf_Ehdr ehdr;
	GElf_Phdr phdr;
	size_t i, n;
	Elf *elf;

	elf = dwfl_module_getelf(es->mod, &bias);
	if (!elf || !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &n))
		return -EINVAL;
	if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)
		return -ENOEXEC;
	for (i = 0; i < n && es->nsegs < ELF_SYMS_MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		es->segs[es->nsegs++] = (struct elf_seg){ phdr.p_offset, phdr.p_filesz,
							  phdr.p_vaddr, phdr.p_align };
	}
	return es->nsegs ? 0 : -ENOEXEC;
}

static int read_build_id(struct elf_syms *es)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, i;

	len = dwfl_module_build_id(es->mod, &bits, &vaddr);
	if (len <= 0)
		return 0;
	es->build_id = malloc(2 * len + 1);
	if (!es->build_id)
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		es->build_id[2 * i] = hex[bits[i] >> 4];
		es->build_id[2 * i + 1] = hex[bits[i] & 0xf];
	}
	es->build_id[2 * len] = '\0';
	return 0;
}

static void load_dwarf(struct elf_syms *es)
{
	Dwarf_Addr bias;

	es->has_dwarf = dwfl_module_getdwarf(es->mod, &bias) != NULL;
}

/* Loads the symbol table now, so a separate debug file is found (and kept open) while the
 * process's root directory still exists, and records what was found. DWARF itself is loaded at
 * the first lookup (load_dwarf): libdw decompresses every debug section when it opens them, tens
 * of MB for a libc, which a process that is never sampled should not cost. */
static int load_debug(struct elf_syms *es)
{
	const char *debug_file = NULL;
	struct stat st;

	es->has_dwarf = -1; /* not looked at yet */
	if (dwfl_module_getsymtab(es->mod) < 0)
		log_debug("no symbol table in %s: %s", es->path, dwfl_errmsg(-1));
	dwfl_module_info(es->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug_file);
	if (!debug_file)
		return 0;
	es->debug_file = strdup(debug_file);
	if (!es->debug_file)
		return -ENOMEM;
	if (!stat(debug_file, &st))
		es->bytes += st.st_size;
	return 0;
}

static int report_module(struct elf_syms *es, int fd)
{
	void **userdata;
	struct stat st;

	if (!fstat(fd, &st))
		es->bytes = st.st_size;
	es->dwfl = dwfl_begin(&elf_syms_callbacks);
	if (!es->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(es->dwfl);
	/* base 0 + p_vaddr: libdwfl addresses are the file's own ELF virtual addresses */
	es->mod = dwfl_report_elf(es->dwfl, es->path, es->path, fd, 0, true);
	if (!es->mod) {
		close(fd); /* only consumed on success */
		return log_warn(-EINVAL, "not a usable ELF file %s (%s)", es->path,
				dwfl_errmsg(-1));
	}
	if (dwfl_report_end(es->dwfl, NULL, NULL))
		return -EINVAL;
	dwfl_module_info(es->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = &es->dbg;
	return 0;
}

static int copy_names(struct elf_syms *es, const char *path, const char *root,
		      const char *debug_root)
{
	es->path = strdup(path);
	es->root = strdup(root ? root : "");
	es->debug_root = debug_root ? strdup(debug_root) : NULL;
	if (!es->path || !es->root || (debug_root && !es->debug_root))
		return -ENOMEM;
	es->dbg = (struct elf_debug_ctx){ es->path, es->root, es->debug_root };
	return 0;
}

struct elf_syms *elf_syms_new(int fd, const char *path, const char *root, const char *debug_root)
{
	struct elf_syms *es;
	int err;

	es = calloc(1, sizeof(*es));
	if (!es) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	err = copy_names(es, path, root, debug_root);
	if (err) {
		close(fd);
		goto out_free;
	}
	err = report_module(es, fd);
	if (!err)
		err = read_segments(es);
	if (!err)
		err = read_build_id(es);
	if (!err)
		err = load_debug(es);
	if (!err)
		return es;
out_free:
	elf_syms_free(es);
	errno = -err;
	return NULL;
}

struct elf_syms *elf_syms_open(const char *path, const char *debug_root)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	return elf_syms_new(fd, path, NULL, debug_root);
}

static void clear_demangled(struct elf_syms *es)
{
	int i;

	for (i = 0; i < ELF_SYMS_MAX_LINES; i++) {
		free(es->demangled[i]);
		es->demangled[i] = NULL;
	}
}

void elf_syms_free(struct elf_syms *es)
{
	if (!es)
		return;
	clear_demangled(es);
	if (es->dwfl)
		dwfl_end(es->dwfl);
	free(es->debug_file);
	free(es->build_id);
	free(es->debug_root);
	free(es->root);
	free(es->path);
	free(es);
}

const char *elf_syms_build_id(const struct elf_syms *es)
{
	return es->build_id;
}

const char *elf_syms_debug_file(const struct elf_syms *es)
{
	return es->debug_file;
}

int elf_syms_dwarf_loaded(const struct elf_syms *es)
{
	return es->has_dwarf > 0;
}

int elf_syms_has_dwarf(struct elf_syms *es)
{
	if (es->has_dwarf < 0)
		load_dwarf(es);
	return es->has_dwarf;
}

size_t elf_syms_size(const struct elf_syms *es)
{
	return es->bytes;
}

int elf_syms_file_to_vaddr(const struct elf_syms *es, uint64_t offset, uint64_t *vaddr)
{
	int i;

	for (i = 0; i < es->nsegs; i++) {
		const struct elf_seg *s = &es->segs[i];
		/* the mapping starts at the page holding p_offset, which may lie a little before it;
		 * p_align and p_offset + p_filesz come from the file: no wrap, powers of two only */
		int pow2 = s->align > 1 && !(s->align & (s->align - 1));
		uint64_t page = pow2 ? s->offset & ~(s->align - 1) : s->offset;

		if (offset >= page && (offset < s->offset || offset - s->offset < s->filesz)) {
			*vaddr = offset + s->vaddr - s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* Demangles C++ names; the result lives in slot `slot` until the next lookup. */
static const char *demangle(struct elf_syms *es, const char *name, int slot)
{
	int status = 0;
	char *out;

	if (!name || strncmp(name, "_Z", 2))
		return name;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (!out || status)
		return name;
	free(es->demangled[slot]);
	es->demangled[slot] = out;
	return out;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name;
}

/* The source position an inlined instance was called from. */
static void call_site(Dwarf_Die *inlined, const char **file, int *line)
{
	Dwarf_Die cu;
	Dwarf_Files *files;
	Dwarf_Attribute attr;
	Dwarf_Word idx = 0, lineno = 0;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &lineno) == 0)
		*line = (int)lineno;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &idx) != 0)
		return;
	if (!dwarf_diecu(inlined, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles))
		return;
	if (idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

static void src_line(struct elf_syms *es, uint64_t vaddr, const char **file, int *line)
{
	Dwfl_Line *l = dwfl_module_getsrc(es->mod, vaddr);

	*file = NULL;
	*line = 0;
	if (l)
		*file = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
}

/* Walks the DIEs that physically contain the innermost scope of vaddr: each inlined subroutine
 * is one frame, the enclosing subprogram the last. */
static int lookup_dwarf(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *lines, int max)
{
	Dwarf_Die *cu, *scopes = NULL, *chain = NULL;
	Dwarf_Addr bias;
	const char *file;
	int line, n, i, out = 0;

	cu = dwfl_module_addrdie(es->mod, vaddr, &bias);
	if (!cu || dwarf_getscopes(cu, vaddr - bias, &scopes) <= 0)
		goto out_free;
	n = dwarf_getscopes_die(&scopes[0], &chain);
	src_line(es, vaddr, &file, &line);
	for (i = 0; i < n && out < max; i++) {
		int tag = dwarf_tag(&chain[i]);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		lines[out].function = demangle(es, die_name(&chain[i]), out);
		lines[out].file = file;
		lines[out].line = line;
		if (!lines[out].function)
			lines[out].function = "??";
		out++;
		if (tag == DW_TAG_subprogram)
			break;
		call_site(&chain[i], &file, &line);
	}
out_free:
	free(chain);
	free(scopes);
	return out;
}

static int lookup_symtab(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *line)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name;

	name = dwfl_module_addrinfo(es->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	if (!name)
		return 0;
	line->function = demangle(es, name, 0);
	src_line(es, vaddr, &line->file, &line->line);
	return 1;
}

int elf_syms_lookup(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *lines, int max)
{
	int n = 0;

	clear_demangled(es);
	if (max > ELF_SYMS_MAX_LINES)
		max = ELF_SYMS_MAX_LINES;
	if (max <= 0)
		return 0;
	if (es->has_dwarf < 0)
		load_dwarf(es);
	if (es->has_dwarf)
		n = lookup_dwarf(es, vaddr, lines, max);
	if (!n)
		n = lookup_symtab(es, vaddr, &lines[0]);
	return n;
}
