/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel symbols from /proc/kallsyms: a sorted array of text symbols searched by address. */
#ifndef SPANPROF_KSYMS_H
#define SPANPROF_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* The longest name kallsyms gives, with its NUL (the kernel's KSYM_NAME_LEN). */
#define KSYMS_NAME_MAX 512

/* One kernel text symbol. name points into the struct ksyms it came from, or into buf; module
 * into the struct ksyms. */
struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* "ext4" for "[ext4]" symbols, NULL for the core kernel */
	char buf[KSYMS_NAME_MAX]; /* a name the table keeps in parts, put together */
};

/* Loads the text symbols (types t/T/w/W) of a kallsyms file (normally "/proc/kallsyms").
 * Returns NULL and sets errno on failure: EACCES when every address reads as zero
 * (kptr_restrict or no CAP_SYSLOG: kernel symbols are unavailable), ENODATA when the file holds no
 * text symbols, ENOMEM, or the errno of opening the file. */
struct ksyms *ksyms_new(const char *path);

/* NULL-safe. */
void ksyms_free(struct ksyms *ks);

/* Fills *out with the symbol with the greatest address <= addr and returns 1, or returns 0 when
 * addr lies below every symbol. Kallsyms has no sizes, so a symbol is taken to extend to the
 * next one. The strings stay valid until ksyms_free() and while *out is neither moved nor
 * reused. */
int ksyms_find(const struct ksyms *ks, uint64_t addr, struct ksym *out);

/* Heap bytes the table holds (addresses, names, runs). */
size_t ksyms_bytes(const struct ksyms *ks);

/* Number of symbols loaded. */
size_t ksyms_count(const struct ksyms *ks);

#endif /* SPANPROF_KSYMS_H */
