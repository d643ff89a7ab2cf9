// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* SPANPROF_<OPTION> variables: looked up in an explicit environ block, lists split on the
 * option's separators, each item applied through the shared option table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_env.h"

#define ENV_NAME_MAX 64
#define ENV_PREFIX "SPANPROF_"

const char *config_env_get(char *const *envp, const struct config_option *opt)
{
	char name[ENV_NAME_MAX];
	size_t n;

	config_env_name(opt, name, sizeof(name));
	n = strlen(name);
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return (*envp)[n + 1] ? *envp + n + 1 : NULL;
	return NULL;
}

/* 1 when the variable NAME=... of entry names an option that the environment may set. */
static int is_known(const char *entry)
{
	size_t n = strcspn(entry, "="), id;
	char name[ENV_NAME_MAX];

	for (id = 0; id < CONFIG_OPT__COUNT; id++) {
		if (!(config_options[id].where & CONFIG_IN_ENV))
			continue;
		config_env_name(&config_options[id], name, sizeof(name));
		if (strlen(name) == n && !strncmp(entry, name, n))
			return 1;
	}
	return 0;
}

static void warn_unknown(char *const *envp, FILE *err)
{
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, ENV_PREFIX, strlen(ENV_PREFIX)) && !is_known(*envp))
			config_errorf(err, "warning: ignoring unknown environment variable %.*s\n",
				      (int)strcspn(*envp, "="), *envp);
}

static int apply_one(struct config_apply *ap, const struct config_option *opt, const char *name,
		     const char *value, FILE *err)
{
	const char *want;
	int ret = config_apply(ap, opt, value, &want);

	if (ret == -ENOMEM) {
		config_errorf(err, "out of memory\n");
		return CONFIG_ERROR;
	}
	return ret ? config_bad_value(err, name, opt, value, want) : CONFIG_RUN;
}

/* Applies each non-empty item of the list value, without the blanks around it. */
static int apply_list(struct config_apply *ap, const struct config_option *opt, const char *name,
		      const char *value, FILE *err)
{
	char *copy = strdup(value), *item, *save, *end;
	int ret = CONFIG_RUN;

	if (!copy) {
		config_errorf(err, "out of memory\n");
		return CONFIG_ERROR;
	}
	config_touch(ap, opt);
	for (item = strtok_r(copy, opt->env_sep, &save); item && ret == CONFIG_RUN;
	     item = strtok_r(NULL, opt->env_sep, &save)) {
		item += strspn(item, " \t\r");
		end = item + strlen(item);
		while (end > item && strchr(" \t\r", end[-1]))
			*--end = '\0';
		if (*item)
			ret = apply_one(ap, opt, name, item, err);
	}
	free(copy);
	return ret;
}

int config_env_load(struct spanprof_config *cfg, char *const *envp, FILE *err)
{
	struct config_apply ap = { .cfg = cfg, .src = CONFIG_SRC_ENV };
	const struct config_option *opt;
	char name[ENV_NAME_MAX];
	const char *value;
	int ret = CONFIG_RUN;
	size_t id;

	warn_unknown(envp, err);
	for (id = 0; id < CONFIG_OPT__COUNT && ret == CONFIG_RUN; id++) {
		opt = &config_options[id];
		if (!(opt->where & CONFIG_IN_ENV) || !(value = config_env_get(envp, opt)))
			continue;
		config_env_name(opt, name, sizeof(name));
		if (opt->kind == CONFIG_KIND_LIST || opt->kind == CONFIG_KIND_MAP)
			ret = apply_list(&ap, opt, name, value, err);
		else
			ret = apply_one(&ap, opt, name, value, err);
	}
	return ret;
}
