// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Window output: each service's profile goes to the local directory and/or the uploader, and
 * one log line per window says what was written and what was dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "output/local_out.h"
#include "output/upload.h"
#include "output/window_encode.h"
#include "util/log.h"

/* How long the agent may spend delivering queued profiles when it stops (the rest is spooled). */
#define UPLOAD_FLUSH_MS 5000

static int start_uploader(struct agent *a)
{
	const struct config_upload *up = &a->cfg->upload;
	struct upload_options o = {
		.server_url = up->server,
		.basic_user = up->basic_auth_user,
		.basic_password = up->basic_auth_password,
		.bearer_token = up->bearer_token,
		.tenant = up->tenant,
		.ca_file = up->ca_file,
		.client_cert = up->client_cert,
		.client_key = up->client_key,
		.tls_insecure = up->tls_insecure,
		.headers = up->headers,
		.nheaders = up->nheaders,
		.static_labels = up->labels,
		.nstatic_labels = up->nlabels,
		.trace_id_label = up->trace_id_label,
		.connect_timeout_ms = up->connect_timeout_s * 1000,
		.total_timeout_ms = up->upload_timeout_s * 1000,
		.queue_bytes = up->queue_bytes,
		.spool_dir = up->spool_dir,
		.spool_bytes = up->spool_bytes,
	};

	a->output.uploader = uploader_new(&o);
	if (!a->output.uploader)
		return -errno; /* uploader_new logged which option and why */
	if (up->spool_dir)
		log_info("undelivered profiles are spooled in %s", up->spool_dir);
	return 0;
}

int agent_open_outputs(struct agent *a)
{
	int err;

	if (a->cfg->output_dir) {
		err = local_out_open(&a->output.out, a->cfg->output_dir);
		if (err) /* the line before says which call failed on which path */
			return log_err(err, "set up the local output directory (--output %s)",
				       a->cfg->output_dir);
	}
	if (a->cfg->upload.server) {
		err = start_uploader(a);
		if (err)
			/* not the URL: it may hold credentials */
			return log_err(err, "set up the uploader%s%s",
				       a->cfg->upload.spool_dir ? " with --spool " : "",
				       a->cfg->upload.spool_dir ? a->cfg->upload.spool_dir : "");
	}
	return 0;
}

void agent_close_outputs(struct agent *a)
{
	uploader_free(a->output.uploader, UPLOAD_FLUSH_MS);
	a->output.uploader = NULL;
}

static int write_local(struct agent *a, const char *service, struct pprof_builder *b)
{
	const char *type = pprof_builder_sample_type(b);
	/* CPU profiles keep their plain names; others say their kind: <...>.off_cpu.pb.gz. */
	const char *kind = strcmp(type, "cpu") ? type : NULL;
	uint8_t *gz = NULL;
	size_t gz_len = 0;
	int err;

	err = window_encode_file(b, &gz, &gz_len);
	if (err)
		log_err(err, "encode profile of service %s", service);
	else
		err = local_out_put(&a->output.out, pprof_builder_time(b), a->output.file_seq++,
				    service, kind, gz, gz_len);
	free(gz);
	return err;
}

/* One service's profile of the closing window, its time fixed by the aggregate: the local file
 * and the push are encoded from the same builder and carry the same time and duration. */
static int write_profile(void *ctx, const char *service, struct pprof_builder *b)
{
	struct agent *a = ctx;
	int err = 0, ret;

	if (a->cfg->output_dir) {
		ret = write_local(a, service, b);
		err = err ?: ret;
	}
	if (a->output.uploader) {
		/* Encoding errors are counted by the uploader; delivery happens on its thread. */
		ret = uploader_submit(a->output.uploader, service, b);
		err = err ?: ret;
	}
	if (err)
		a->output.write_errors++;
	else
		a->output.profiles_written++;
	return err;
}

/* One log line per window; drops (BPF and user space) are a warning so they are never missed.
 * written/failed: this window's profiles that were written (or queued), and that were lost. */
static void log_window(struct agent *a, uint64_t written, uint64_t failed)
{
	uint64_t drops[SPANPROF_DROP__COUNT] = { 0 }, delta;
	struct hook_registry_stats hs;
	struct aggregate_stats as;
	char text[512] = "", lost[32] = "";
	size_t len = 0, i;

	loader_read_drops(a->loader, drops, SPANPROF_DROP__COUNT);
	for (i = 0; i < SPANPROF_DROP__COUNT; i++) {
		delta = drops[i] - a->output.last_drops[i];
		a->output.last_drops[i] = drops[i];
		if (delta && len < sizeof(text))
			len += snprintf(text + len, sizeof(text) - len, " %s=%llu",
					metrics_drop_reason_name(i), (unsigned long long)delta);
	}
	aggregate_get_stats(a->agg, &as);
	hook_registry_get_stats(a->hooks, &hs);
	if (failed)
		snprintf(lost, sizeof(lost), ", %llu failed", (unsigned long long)failed);
	log_info("window written: %llu profiles%s; totals: samples=%llu in_spans=%llu "
		 "hooks=%llu profiles=%llu write_errors=%llu",
		 (unsigned long long)written, lost, (unsigned long long)as.samples,
		 (unsigned long long)as.samples_in_spans, (unsigned long long)hs.files_attached,
		 (unsigned long long)a->output.profiles_written,
		 (unsigned long long)a->output.write_errors);
	if (len || as.service_overflow || as.encode_errors || a->scans.overflows)
		log_warn(0, "drops:%s service_overflow=%llu encode_errors=%llu scan_overflow=%llu",
			 text, (unsigned long long)as.service_overflow,
			 (unsigned long long)as.encode_errors,
			 (unsigned long long)a->scans.overflows);
}

void agent_flush(struct agent *a)
{
	uint64_t written = a->output.profiles_written, failed = a->output.write_errors;

	/* The window ends where its last drain flipped the BPF window: every service and both
	 * profile kinds get the same end, however long writing the earlier ones takes. */
	aggregate_flush(a->agg, a->output.window_closed_ns, write_profile, a);
	if (a->off_cpu.agg)
		aggregate_flush(a->off_cpu.agg, a->output.window_closed_ns, write_profile, a);
	metrics_add(a->metrics.reg, METRIC_WINDOWS_WRITTEN, 1);
	/* A window whose profiles could not be written does not count for liveness. */
	if (a->output.write_errors == failed)
		metrics_window_written(a->metrics.reg, clock_mono_ns());
	log_window(a, a->output.profiles_written - written, a->output.write_errors - failed);
}
