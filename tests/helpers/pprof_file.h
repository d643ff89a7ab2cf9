/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only pprof reader: decodes (gzipped) profiles with protobuf-c, answers questions about
 * samples, and asks `go tool pprof` whether a file parses. */
#ifndef SPANPROF_TEST_PPROF_FILE_H
#define SPANPROF_TEST_PPROF_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/profile.pb-c.h"

/* Gunzips buf (gzip or zlib; at most 256 MiB out) into a malloc'ed buffer. Returns 0 or
 * -errno. */
int pprof_gunzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len);

/* Decodes an encoded profile held in memory, gzipped (detected by its magic) or not.
 * Free with pprof_file_free(). NULL on error. */
Perftools__Profiles__Profile *pprof_decode(const uint8_t *buf, size_t len);

/* Reads the whole file, gunzips it if gzipped, and decodes it. NULL on error. */
Perftools__Profiles__Profile *pprof_file_read(const char *path);

/* NULL-safe. */
void pprof_file_free(Perftools__Profiles__Profile *p);

/* Each profile the agent wrote into dir for service: files named *-<service>.pb.gz, or with kind
 * ("off_cpu") *-<service>.<kind>.pb.gz. fn(p, path, ctx) sees each one decoded, in directory
 * order. Returns the number of files, or -1 when dir cannot be opened or a file does not decode
 * (said on stdout). */
typedef void (*pprof_profile_fn)(const Perftools__Profiles__Profile *p, const char *path,
				 void *ctx);
int pprof_file_each(const char *dir, const char *service, const char *kind, pprof_profile_fn fn,
		    void *ctx);

/* string_table[idx], or NULL when idx is out of range. */
const char *pprof_str(const Perftools__Profiles__Profile *p, int64_t idx);

/* Location / function / mapping with this id, or NULL (linear search; ids need not be dense). */
const Perftools__Profiles__Location *pprof_location(const Perftools__Profiles__Profile *p,
						    uint64_t id);
const Perftools__Profiles__Function *pprof_function(const Perftools__Profiles__Profile *p,
						    uint64_t id);
const Perftools__Profiles__Mapping *pprof_mapping(const Perftools__Profiles__Profile *p,
						  uint64_t id);

/* Value of the sample's first string label with this key, or NULL if it has none. */
const char *pprof_sample_label(const Perftools__Profiles__Profile *p,
			       const Perftools__Profiles__Sample *s, const char *key);

/* Name of the innermost function of the sample's leaf location, or NULL. */
const char *pprof_leaf_function(const Perftools__Profiles__Profile *p,
				const Perftools__Profiles__Sample *s);

/* Frame index (0: leaf) of the first location with a function called name (prefix: whose name
 * starts with it), or -1. */
long pprof_sample_function_depth(const Perftools__Profiles__Profile *p,
				 const Perftools__Profiles__Sample *s, const char *name,
				 int prefix);
/* 1 when any line of any location of the sample's stack names this function, else 0. */
int pprof_sample_has_function(const Perftools__Profiles__Profile *p,
			      const Perftools__Profiles__Sample *s, const char *name);

/* The file name of the first (innermost) line naming this function in the sample's stack; NULL
 * when no line names it, "" when its function has no file name. */
const char *pprof_sample_function_file(const Perftools__Profiles__Profile *p,
				       const Perftools__Profiles__Sample *s, const char *name);

/* Prints s's function names, leaf first, on one indented line (at most max_locations
 * locations; "?" for a function the profile does not define). */
void pprof_sample_print(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
			size_t max_locations);

/* Sum of value[0] over all samples (for cpu/nanoseconds: total CPU time). */
int64_t pprof_total_value(const Perftools__Profiles__Profile *p);

/* Runs `go tool pprof -symbolize=none -raw path`. Returns 0 when it parsed the file, -1 when it
 * did not (err gets its exit status and a stderr excerpt), and 1 when `go` is not on PATH
 * (the caller should skip). */
int pprof_file_check_with_go(const char *path, char *err, size_t errlen);

/* Runs `go tool pprof -traces path` as a user would (default symbolization, which demangles
 * names), its output into out (cut to size). Returns 0, -1 when it failed, 1 when `go` is not
 * on PATH (the caller should skip). */
int pprof_file_go_traces(const char *path, char *out, size_t size);

#endif /* SPANPROF_TEST_PPROF_FILE_H */
