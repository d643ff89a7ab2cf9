/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The configuration's environment source: SPANPROF_<OPTION> variables. Internal to config*.c. */
#ifndef SPANPROF_CONFIG_ENV_H
#define SPANPROF_CONFIG_ENV_H

#include <stdio.h>

#include "config/config_int.h"

/* The value of opt's variable in envp (NULL: an empty environment), the first one if repeated,
 * as getenv() does. NULL when unset or empty: an empty variable counts as unset. */
const char *config_env_get(char *const *envp, const struct config_option *opt);

/* Applies every SPANPROF_* variable of envp to cfg. Lists are split at the option's separators
 * (blanks around items dropped). A SPANPROF_ name that is no option is a warning on err, not an
 * error: the environment is shared with other tools. Returns CONFIG_RUN, or CONFIG_ERROR after
 * printing "spanprof: SPANPROF_X: invalid value ...". */
int config_env_load(struct spanprof_config *cfg, char *const *envp, FILE *err);

#endif /* SPANPROF_CONFIG_ENV_H */
