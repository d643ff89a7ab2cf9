// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Names and opens the file a process's interpreter lives in. */
#include <stdio.h>
#include <string.h>

#include "discover/map_open.h"
#include "interp/interp_file.h"

int interp_file_open(const char *proc_root, pid_t pid, const struct proc_map *m,
		     struct interp_file *file)
{
	memset(file, 0, sizeof(*file));
	snprintf(file->path, sizeof(file->path), "%s", m->path);
	file->dev = m->dev;
	file->inode = m->inode;
	return map_open_fd(proc_root, pid, m);
}
