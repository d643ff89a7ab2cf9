// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* After every source is applied: the secrets are read from their files, and options that only
 * make sense together are checked, so a bad combination stops the agent at start. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config/config_int.h"

/* Far more than any password or token; a larger file is surely the wrong one. */
#define SECRET_MAX (64 * 1024)

static int complain(FILE *err, const char *what, const char *path, const char *why)
{
	config_errorf(err, "%s %s: %s\n", what, path, why);
	return CONFIG_ERROR;
}

/* Reads into buf (SECRET_MAX + 1 bytes) and returns the length, or -errno. */
static ssize_t read_all(int fd, char *buf)
{
	size_t len = 0;
	ssize_t n;

	while (len <= SECRET_MAX) {
		n = read(fd, buf + len, SECRET_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += n;
	}
	return len;
}

/* The secret in path, trailing newlines removed, as a string cfg owns. Never prints it. */
static int read_secret(struct spanprof_config *cfg, const char *flag, const char *path,
		       const char **out, FILE *err)
{
	char *buf = malloc(SECRET_MAX + 1);
	const char *why = NULL;
	ssize_t len = -ENOMEM;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		len = -errno;
	else if (buf)
		len = read_all(fd, buf);
	if (fd >= 0)
		close(fd);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	if (len < 0)
		why = strerror(-len);
	else if (len > SECRET_MAX)
		why = "larger than 64 KiB, surely not a secret";
	else if (len == 0)
		why = "empty";
	else if (memchr(buf, '\0', len))
		why = "contains a NUL byte";
	else if (!(*out = config_strdup(cfg, buf, len)))
		why = strerror(ENOMEM);
	if (buf) {
		explicit_bzero(buf, SECRET_MAX + 1);
		free(buf);
	}
	return why ? complain(err, flag, path, why) : CONFIG_RUN;
}

static int read_secrets(struct spanprof_config *cfg, FILE *err)
{
	struct config_upload *up = &cfg->upload;
	int ret = CONFIG_RUN;

	if (up->basic_auth_password_file && up->basic_auth_password) {
		config_errorf(err, "give the basic auth password once: "
				   "--basic-auth-password-file or SPANPROF_BASIC_AUTH_PASSWORD\n");
		return CONFIG_ERROR;
	}
	if (up->bearer_token_file && up->bearer_token) {
		config_errorf(err, "give the bearer token once: --bearer-token-file or "
				   "SPANPROF_BEARER_TOKEN\n");
		return CONFIG_ERROR;
	}
	if (up->basic_auth_password_file)
		ret = read_secret(cfg, "--basic-auth-password-file", up->basic_auth_password_file,
				  &up->basic_auth_password, err);
	if (!ret && up->bearer_token_file) {
		ret = read_secret(cfg, "--bearer-token-file", up->bearer_token_file,
				  &up->bearer_token, err);
		/* It goes into a header line as it is. */
		if (!ret && config_check_text(up->bearer_token, NULL))
			ret = complain(err, "--bearer-token-file", up->bearer_token_file,
				       "the token contains control characters");
	}
	return ret;
}

/* The first upload option set, by flag name; NULL when none is. */
static const char *upload_option_set(const struct config_upload *up)
{
	if (up->basic_auth_user)
		return "--basic-auth-user";
	if (up->basic_auth_password)
		return "a basic auth password";
	if (up->bearer_token)
		return "a bearer token";
	if (up->tenant)
		return "--tenant";
	if (up->nheaders)
		return "--header";
	if (up->ca_file || up->client_cert || up->client_key)
		return up->ca_file     ? "--ca-file" :
		       up->client_cert ? "--client-cert" :
					 "--client-key";
	if (up->tls_insecure)
		return "--tls-insecure";
	if (up->trace_id_label)
		return "--trace-id-label";
	if (up->spool_dir)
		return "--spool";
	return NULL;
}

/* 1 when one of up's extra headers is called name. */
static int has_header(const struct config_upload *up, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < up->nheaders; i++)
		if (!strncasecmp(up->headers[i], name, n) && up->headers[i][n] == ':')
			return 1;
	return 0;
}

static int check_combinations(const struct config_upload *up, FILE *err)
{
	const char *problem = NULL, *set;

	if (!up->server && (set = upload_option_set(up))) {
		fprintf(err,
			"spanprof: %s is set but --server is not: upload options need a "
			"server\n",
			set);
		return CONFIG_ERROR;
	}
	if (up->basic_auth_user && !up->basic_auth_password)
		problem = "--basic-auth-user needs a password: --basic-auth-password-file or "
			  "SPANPROF_BASIC_AUTH_PASSWORD";
	else if (up->basic_auth_password && !up->basic_auth_user)
		problem = "a basic auth password needs --basic-auth-user";
	else if (up->basic_auth_user && up->bearer_token)
		problem = "use basic auth or a bearer token, not both";
	else if ((up->basic_auth_user || up->bearer_token) && has_header(up, "Authorization"))
		problem = "--header Authorization conflicts with basic auth or the bearer token";
	else if (up->tenant && has_header(up, "X-Scope-OrgID"))
		problem = "--header X-Scope-OrgID conflicts with --tenant";
	else if (!up->client_cert != !up->client_key)
		problem = "--client-cert and --client-key go together";
	if (problem) {
		config_errorf(err, "%s\n", problem);
		return CONFIG_ERROR;
	}
	return CONFIG_RUN;
}

/* TLS files are read by libcurl at the first push: check now that they can be. */
static int check_readable(const struct config_upload *up, FILE *err)
{
	const char *flags[] = { "--ca-file", "--client-cert", "--client-key" };
	const char *paths[] = { up->ca_file, up->client_cert, up->client_key };
	size_t i;

	for (i = 0; i < 3; i++)
		if (paths[i] && access(paths[i], R_OK))
			return complain(err, flags[i], paths[i], strerror(errno));
	return CONFIG_RUN;
}

size_t config_label_budget(const struct config_upload *up, int k8s)
{
	return series_labels_budget(
		series_labels_lifted(up->trace_id_label, k8s, up->nthread_ctx_labels));
}

/* The server counts the labels it lifts from samples against its 30 per series. */
static int check_label_budget(const struct config_upload *up, FILE *err)
{
	size_t budget = config_label_budget(up, 0);

	if (up->nlabels <= budget)
		return CONFIG_RUN;
	return config_errorf(err,
			     "%zu --label options, at most %zu fit: the server allows 30 labels "
			     "per series and counts __name__, service_name and span_name%s%s (and "
			     "on Kubernetes namespace, pod and container)\n",
			     up->nlabels, budget, up->trace_id_label ? ", trace_id" : "",
			     up->nthread_ctx_labels ? " and the --thread-ctx-labels" : "");
}

/* A --thread-ctx-labels key labels samples under its name with '.' and '-' written '_' (at most
 * 64 bytes, checked when parsed): that name must be one a series may carry, not one an earlier
 * key gives, not one spanprof sets itself (on Kubernetes or not: see
 * series_label_set_by_spanprof()), and not one a --label sets for the whole series: a sample or
 * series would carry it twice. */
static int check_thread_ctx_labels(const struct config_upload *up, FILE *err)
{
	char name[128], other[128];
	const char *key, *why;
	size_t i, j, n;

	for (i = 0; i < up->nthread_ctx_labels; i++) {
		key = up->thread_ctx_labels[i];
		n = series_label_name_of_key(key, name, sizeof(name));
		for (j = 0; j < i; j++) {
			series_label_name_of_key(up->thread_ctx_labels[j], other, sizeof(other));
			if (!strcmp(name, other))
				return config_errorf(
					err,
					"--thread-ctx-labels: %s labels samples as %s, "
					"which %s does too\n",
					key, name, up->thread_ctx_labels[j]);
		}
		why = series_label_set_by_spanprof(name, n);
		if (why)
			return config_errorf(
				err,
				"--thread-ctx-labels: %s labels samples as %s, which spanprof sets "
				"on %s\n",
				key, name, why);
		why = series_label_check(name, n, "v");
		if (why)
			return config_errorf(
				err, "--thread-ctx-labels: %s labels samples as %s: want %s\n", key,
				name, why);
		for (j = 0; j < up->nlabels; j++)
			if (!series_label_name_cmp(up->labels[j].key, strlen(up->labels[j].key),
						   name, n))
				return config_errorf(
					err,
					"--thread-ctx-labels: %s labels samples as %s, "
					"which --label %s sets for every series\n",
					key, name, up->labels[j].key);
	}
	return CONFIG_RUN;
}

int config_check(struct spanprof_config *cfg, FILE *err)
{
	int ret = read_secrets(cfg, err);

	/* Local files are the default output only when nothing is uploaded; with --server they are
	 * written only if --output asks for them. */
	if (!cfg->output_dir && !cfg->upload.server)
		cfg->output_dir = CONFIG_DEFAULT_OUTPUT;

	ret = ret ?: check_combinations(&cfg->upload, err);
	ret = ret ?: check_thread_ctx_labels(&cfg->upload, err);
	ret = ret ?: check_label_budget(&cfg->upload, err);
	return ret ?: check_readable(&cfg->upload, err);
}
