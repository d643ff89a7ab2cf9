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
#include "symbolize/sym_index.h"
#include "util/gopclntab.h"
#include "util/gopclntab_inline.h"
#include "util/cxx_demangle.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"
#include "util/log.h"

#define ELF_SYMS_MAX_SEGS 16

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
	size_t dwarf_bytes; /* DWARF bytes of the main file itself */
	int dwarf_refused; /* DWARF not loaded: larger than the limit */
	struct elf_seg segs[ELF_SYMS_MAX_SEGS];
	int nsegs;
	char *demangled[ELF_SYMS_MAX_LINES]; /* names handed out by the last lookup */
	struct gopclntab gopcln; /* Go's own table, for binaries without .symtab and DWARF */
	struct gopclntab_inl gopcln_inl; /* its inline trees; empty when not found */
	int gopcln_state; /* 0: not looked for, 1: usable, -1: none */
	int refused; /* ELF_SYMS_REFUSED_* found, until elf_syms_take_refusal() */
	struct sym_index syms; /* the symbol table by address, built at the first lookup */
	int syms_state; /* 0: not built, 1: built, -1: could not be (libdwfl looks up) */
};

/* Hands libdwfl the main file we opened without mmap (elf_guard_begin): libdwfl would map it,
 * and a process truncating the file under that mapping would kill the agent with SIGBUS. */
static int give_main_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	struct elf_debug_ctx *ctx = userdata ? *userdata : NULL;
	int fd;

	(void)mod, (void)modname, (void)base, (void)file_name;
	if (!ctx || !ctx->main_elf)
		return -1;
	*elfp = ctx->main_elf;
	fd = ctx->main_fd; /* libdwfl closes it after elf_end(); libelf reads through it */
	ctx->main_elf = NULL;
	ctx->main_fd = -1;
	return fd;
}

static const Dwfl_Callbacks elf_syms_callbacks = {
	.find_elf = give_main_elf,
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
	if (!elf || bias || !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &n))
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

/* Finds the separate debug file now, while the process's root directory exists, and records
 * it. The symbol table and DWARF are read at the first lookup (symbol_at, load_dwarf): a
 * libc's symbol table is MBs, its DWARF tens of MB, which a file that is never sampled (most
 * of the files of a node's processes) should not cost. */
static int load_debug(struct elf_syms *es)
{
	GElf_Addr bias;
	Elf *elf;

	es->has_dwarf = -1; /* not looked at yet */
	elf = dwfl_module_getelf(es->mod, &bias);
	if (!elf || !elf_debug_prefind(&es->dbg, elf))
		return 0;
	es->debug_file = strdup(es->dbg.found_name);
	return es->debug_file ? 0 : -ENOMEM;
}

/* The address range libdwfl gives the module so that its bias is 0: from the first PT_LOAD's
 * aligned start (as libdwfl computes it) to the end of the highest segment. */
static int module_range(Elf *elf, GElf_Addr *low, GElf_Addr *high)
{
	GElf_Phdr ph;
	size_t i, n;
	int first = 1;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			*low = *high = ph.p_vaddr & -ph.p_align;
		first = 0;
		if (ph.p_vaddr + ph.p_memsz > *high)
			*high = ph.p_vaddr + ph.p_memsz;
	}
	return first || *high <= *low ? -ENOEXEC : 0;
}

/* Opens fd with elf_guard_begin() (caps, no mmap) and reports it to a new Dwfl; fd is consumed. */
static int report_module(struct elf_syms *es, int fd)
{
	GElf_Addr low = 0, high = 0;
	void **userdata;
	Elf *elf;
	int err;

	elf = elf_guard_begin(fd);
	if (!elf) {
		err = -errno;
		close(fd);
		log_warn(err, "not a usable ELF file %s: %s", es->path,
			 err == -E2BIG ? "over a header or table cap" : strerror(-err));
		return -EINVAL; /* not ELF, malformed or over a cap: never usable */
	}
	es->dwarf_bytes = elf_guard_dwarf_bytes(elf, fd);
	err = module_range(elf, &low, &high);
	es->dwfl = err ? NULL : dwfl_begin(&elf_syms_callbacks);
	if (!es->dwfl) {
		elf_end(elf);
		close(fd);
		return err ?: -ENOMEM;
	}
	es->dbg.main_elf = elf;
	es->dbg.main_fd = fd;
	dwfl_report_begin(es->dwfl);
	es->mod = dwfl_report_module(es->dwfl, es->path, low, high);
	if (es->mod) {
		dwfl_module_info(es->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
		*userdata = &es->dbg;
	}
	if (!es->mod || dwfl_report_end(es->dwfl, NULL, NULL))
		return log_warn(-EINVAL, "report ELF file %s to libdwfl: %s", es->path,
				dwfl_errmsg(-1));
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
	es->dbg = (struct elf_debug_ctx){
		.path = es->path,
		.root = es->root,
		.debug_root = es->debug_root,
		.main_fd = -1,
		.found_fd = -1,
	};
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
	sym_index_free(&es->syms);
	if (es->dwfl)
		dwfl_end(es->dwfl);
	if (es->dbg.main_elf) { /* never asked for by libdwfl */
		elf_end(es->dbg.main_elf);
		close(es->dbg.main_fd);
	}
	elf_debug_release(&es->dbg);
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

int elf_syms_has_dwarf(struct elf_syms *es)
{
	if (es->has_dwarf < 0)
		load_dwarf(es);
	return es->has_dwarf;
}

size_t elf_syms_size(const struct elf_syms *es)
{
	/* Go's function table, when read (libelf's copy of its section) */
	size_t go = es->gopcln_state > 0 ? es->gopcln.size : 0;

	return sizeof(*es) + es->syms.bytes + go;
}

int elf_syms_tables_pending(const struct elf_syms *es)
{
	/* With DWARF loaded a lookup reads these only when DWARF has no answer: not predicted. */
	return es->has_dwarf <= 0 && (!es->syms_state || !es->gopcln_state);
}

size_t elf_syms_open_size(void)
{
	return sizeof(struct elf_syms);
}

/* The estimate for the table of the separate debug file, which libdwfl takes when the file
 * itself has no .symtab: the one DWARF came from, or the one found at open and not handed to
 * libdwfl yet (it asks for it at the first symbol table read, DWARF refused or not), whose
 * section headers are read here without mmap. 0 when there is none. */
static size_t separate_table_estimate(struct elf_syms *es, Elf *elf)
{
	Dwarf *dw;
	Elf *dbg;
	GElf_Addr bias;
	size_t bytes = 0;

	if (es->has_dwarf > 0 && (dw = dwfl_module_getdwarf(es->mod, &bias)) &&
	    (dbg = dwarf_getelf(dw)) && dbg != elf)
		bytes = sym_index_estimate(dbg);
	if (es->dbg.found_fd >= 0 && (dbg = elf_begin(es->dbg.found_fd, ELF_C_READ, NULL))) {
		size_t found = sym_index_estimate(dbg);

		bytes = found > bytes ? found : bytes;
		elf_end(dbg);
	}
	return bytes;
}

size_t elf_syms_tables_estimate(struct elf_syms *es)
{
	Elf *elf;
	GElf_Addr bias;
	GElf_Shdr sh;
	size_t bytes = 0;

	if ((es->syms_state && es->gopcln_state) || !(elf = dwfl_module_getelf(es->mod, &bias)))
		return 0;
	if (!es->syms_state) {
		size_t own = sym_index_estimate(elf), sep = separate_table_estimate(es, elf);

		bytes += own > sep ? own : sep;
	}
	if (!es->gopcln_state &&
	    (elf_section_named(elf, ".gopclntab", ELF_SCN_ANY, &sh) ||
	     elf_section_named(elf, ".data.rel.ro.gopclntab", ELF_SCN_ANY, &sh)))
		bytes += sh.sh_size < ELF_SECTION_MAX_GO_TABLE ? sh.sh_size :
								 ELF_SECTION_MAX_GO_TABLE;
	return bytes;
}

size_t elf_syms_dwarf_bytes(const struct elf_syms *es)
{
	if (es->dwarf_bytes || !es->debug_file)
		return es->dwarf_bytes;
	return es->dbg.debug_dwarf_bytes;
}

int elf_syms_load_dwarf(struct elf_syms *es, size_t limit)
{
	if (es->has_dwarf >= 0)
		return es->has_dwarf;
	if (limit && elf_syms_dwarf_bytes(es) > limit) {
		es->has_dwarf = 0;
		es->dwarf_refused = 1;
		return 0;
	}
	es->dbg.dwarf_limit = limit; /* a debug file found only now is checked by elf_debug_find */
	load_dwarf(es);
	es->dwarf_refused = !es->has_dwarf && es->dbg.refused_big;
	return es->has_dwarf;
}

int elf_syms_dwarf_decided(const struct elf_syms *es)
{
	return es->has_dwarf >= 0;
}

int elf_syms_dwarf_refused(const struct elf_syms *es)
{
	return es->dwarf_refused;
}

int elf_syms_file_to_vaddr(const struct elf_syms *es, uint64_t offset, uint64_t *vaddr)
{
	int i;

	for (i = 0; i < es->nsegs; i++) {
		const struct elf_seg *s = &es->segs[i];
		/* the mapping starts at the page holding p_offset, which may lie a little before
		 * it; p_align and p_offset + p_filesz come from the file: no wrap, powers of two
		 * only */
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
	char *out;

	if (!name || strncmp(name, "_Z", 2))
		return name;
	out = cxx_demangle(name);
	if (!out)
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

/* The symbol holding vaddr: from the sorted index (libdwfl scans the whole table per lookup:
 * 0.1-0.7 ms for libc or a libpython here, against 0.1-0.3 µs). */
static const char *symbol_at(struct elf_syms *es, uint64_t vaddr)
{
	GElf_Off off;
	GElf_Sym sym;
	uint64_t idx_off;

	int err;

	if (!es->syms_state) {
		err = sym_index_build(&es->syms, es->mod);
		if (err == -EBADMSG) { /* answered as a file without symbols: none is read */
			es->refused |= ELF_SYMS_REFUSED_STRTAB;
			err = 0;
		}
		es->syms_state = err ? -1 : 1;
	}
	if (es->syms_state > 0)
		return sym_index_lookup(&es->syms, vaddr, &idx_off);
	return dwfl_module_addrinfo(es->mod, vaddr, &off, &sym, NULL, NULL, NULL);
}

static int lookup_symtab(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *line)
{
	const char *name = symbol_at(es, vaddr);

	if (!name)
		return 0;
	line->function = demangle(es, name, 0);
	line->file = NULL;
	line->line = 0;
	if (es->has_dwarf > 0) /* libdwfl would load refused DWARF to find a line */
		src_line(es, vaddr, &line->file, &line->line);
	return 1;
}

/* Go binaries keep .gopclntab even stripped (the runtime needs it): function, file and line,
 * and inlined callers from the runtime's inline trees. Also the source of file:line when libdw
 * cannot read Go's DWARF (compressed as .zdebug_*): then the symbol table's name (have_name,
 * in lines[0]) stays the outermost frame's. Returns the number of lines filled. */
static int lookup_gopclntab(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *lines,
			    int max, int have_name)
{
	struct gopclntab_frame frames[ELF_SYMS_MAX_LINES];
	const char *name = have_name ? lines[0].function : NULL;
	struct gopclntab_func f;
	GElf_Addr bias;
	Elf *elf;
	int n, i;

	if (!es->gopcln_state) {
		elf = dwfl_module_getelf(es->mod, &bias);
		int err = elf ? gopclntab_from_elf(&es->gopcln, elf) : -ENODATA;

		es->gopcln_state = !err ? 1 : -1;
		if (!err)
			err = gopclntab_inline_from_elf(&es->gopcln_inl, &es->gopcln, elf);
		es->refused |= err == -EFBIG ? ELF_SYMS_REFUSED_GO_TABLE : 0;
	}
	if (es->gopcln_state < 0 || gopclntab_find(&es->gopcln, vaddr, &f))
		return 0;
	n = gopclntab_inline_frames(&es->gopcln, &es->gopcln_inl, &f, vaddr, frames, max);
	if (n <= 0) /* a malformed inline tree: the function alone */
		n = gopclntab_inline_frames(&es->gopcln, NULL, &f, vaddr, frames, 1);
	for (i = 0; i < n; i++)
		lines[i] =
			(struct elf_sym_line){ frames[i].function, frames[i].file, frames[i].line };
	if (name)
		lines[n - 1].function = name;
	return n;
}

int elf_syms_lookup(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *lines, int max)
{
	int n = 0, i;

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
	if (!n)
		n = lookup_gopclntab(es, vaddr, lines, max, 0);
	else if (n == 1 && !lines[0].file && (i = lookup_gopclntab(es, vaddr, lines, max, 1)))
		n = i;
	return n;
}

int elf_syms_take_refusal(struct elf_syms *es)
{
	int refused = es->refused;

	es->refused = 0;
	return refused;
}
