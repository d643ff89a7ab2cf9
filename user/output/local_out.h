/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Writes gzipped pprof files into a local directory, atomically (temp file + rename). */
#ifndef SPANPROF_LOCAL_OUT_H
#define SPANPROF_LOCAL_OUT_H

#include <stddef.h>
#include <stdint.h>

/* The agent's output directory, with what happened to it. */
struct local_out {
	const char *dir; /* not owned */
	uint64_t dir_recreated; /* times it was gone at a write and was created again */
	uint64_t temp_removed; /* temp files of an interrupted run removed by local_out_open() */
	int gone_logged; /* the first recreation was logged */
};

/* Creates dir (and parents) if missing and removes the temp files a killed run left there:
 * regular files named like ours (.<profile name>.tmp), nothing else, no symlink followed.
 * Returns 0 or -errno (logged with the path). */
int local_out_open(struct local_out *lo, const char *dir);

/* local_out_write() into lo->dir; when the directory is gone (deleted while the agent runs) it
 * is created again first, counted, and logged once. Returns 0 or -errno (logged). */
int local_out_put(struct local_out *lo, int64_t window_start_ns, unsigned int seq,
		  const char *service, const char *kind, const uint8_t *gz, size_t len);

/* Removes our temp files from dir (see local_out_open). Returns how many, or -errno. */
int local_out_remove_temp(const char *dir);

/* Creates dir (and parents) if missing. Returns 0 or -errno (logged with the path). */
int local_out_prepare(const char *dir);

/* Writes gz (already gzipped pprof) as DIR/<UTC time of window start,
 * YYYYmmddTHHMMSS.mmmZ>-<seq>-<service>.pb.gz where seq is zero-padded to 6 digits and service is
 * sanitised to [A-Za-z0-9._-] (others become '_'; at most 128 bytes; "unknown_service" when NULL or
 * empty), so names sort by time. Fails with -ENAMETOOLONG, before writing, when the final path does
 * not fit path_out. Writes DIR/.<name>.tmp, fsyncs, then renames. If path_out is not NULL, copies
 * the final path there (size path_size). Returns 0 or -errno (logged with the path). */
int local_out_write(const char *dir, int64_t window_start_ns, unsigned int seq, const char *service,
		    const uint8_t *gz, size_t len, char *path_out, size_t path_size);

/* local_out_write(), but a profile of another kind than CPU (kind not NULL, [a-z_] only, like
 * "off_cpu") is named <...>-<seq>-<service>.<kind>.pb.gz. */
int local_out_write_kind(const char *dir, int64_t window_start_ns, unsigned int seq,
			 const char *service, const char *kind, const uint8_t *gz, size_t len,
			 char *path_out, size_t path_size);

#endif /* SPANPROF_LOCAL_OUT_H */
