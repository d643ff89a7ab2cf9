/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Writes gzipped pprof files into a local directory, atomically (temp file + rename). */
#ifndef SPANPROF_LOCAL_OUT_H
#define SPANPROF_LOCAL_OUT_H

#include <stddef.h>
#include <stdint.h>

/* Creates dir (and parents) if missing. Returns 0 or -errno (logged with the path). */
int local_out_prepare(const char *dir);

/* Writes gz (already gzipped pprof) as DIR/<UTC time of window start, YYYYmmddTHHMMSS.mmmZ>-<seq>-<service>.pb.gz
 * where seq is zero-padded to 6 digits and service is sanitised to [A-Za-z0-9._-] (others become
 * '_'; at most 128 bytes; "unknown_service" when NULL or empty), so names sort by time.
 * Fails with -ENAMETOOLONG, before writing, when the final path does not fit path_out.
 * Writes DIR/.<name>.tmp, fsyncs, then renames. If path_out is not NULL, copies the final path
 * there (size path_size). Returns 0 or -errno (logged with the path). */
int local_out_write(const char *dir, int64_t window_start_ns, unsigned int seq, const char *service,
		    const uint8_t *gz, size_t len, char *path_out, size_t path_size);

#endif /* SPANPROF_LOCAL_OUT_H */
