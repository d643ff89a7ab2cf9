/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The BPF loader's options from the agent's configuration: what the agent loads with, and what
 * its worst-case memory is computed from (map_budget.h). */
#ifndef SPANPROF_LOADER_OPTIONS_H
#define SPANPROF_LOADER_OPTIONS_H

#include "agent/loader.h"
#include "agent/map_sizes.h"
#include "config/config.h"

/* lo for cfg, with the window map sizes ms (map_sizes_compute). */
void loader_options_from_config(const struct spanprof_config *cfg, const struct map_sizes *ms,
				struct loader_options *lo);

#endif /* SPANPROF_LOADER_OPTIONS_H */
