/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The configuration's file source: a YAML mapping whose keys are the long options. */
#ifndef SPANPROF_CONFIG_FILE_H
#define SPANPROF_CONFIG_FILE_H

#include <stdio.h>

#include "config/config.h"

/* Applies the YAML file at path to cfg, as the lowest source. The file holds one mapping (or
 * nothing); values are scalars, lists for repeatable options (a scalar is a list of one) and a
 * mapping for labels. Returns CONFIG_RUN, or CONFIG_ERROR after printing one line on err:
 * "spanprof: PATH: <why it cannot be read>" or "spanprof: PATH:LINE: <what>" for a syntax
 * error, an unknown or repeated key, or a bad value. */
int config_file_load(struct spanprof_config *cfg, const char *path, FILE *err);

#endif /* SPANPROF_CONFIG_FILE_H */
